import { createHash } from "node:crypto";
import { existsSync, lstatSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { claimPrivateDirectory, PrivateDirectoryError } from "./private-dir";

// The embedded database, served to the other processes of this machine
// (decision 032): the process that holds the data directory (the server, or
// whichever `settle` command opened it first) listens on a Unix socket beside
// it, and a `settle` command that finds the directory in use talks PostgreSQL
// to that socket instead of failing. A Unix socket, not TCP: only this
// machine's users who may read the data directory's folder can reach it.
//
// A long data path puts the socket's folder in the temp folder, under a name anyone can work out: another
// account could make it first and stand in for the database. So the server claims that folder as the
// gateway's spool claims its own (a real folder, not a link, owned by this user, 0700) and does not serve
// on one it cannot claim, and a `settle` command connects only to a socket this user owns in such a folder.
//
// PGlite is one session: a client inside a transaction holds every other statement, the server's own
// included, until it commits. A client that stays in a transaction without a word for
// IDLE_IN_TRANSACTION_MS is rolled back and dropped, as PostgreSQL's idle_in_transaction_session_timeout
// would: 10 s is far longer than Settle's own commands pause between the statements of a transaction
// (export, import, restore and migrations send the next as soon as the last is answered), and short enough
// that the requests the server holds meanwhile (ingest, the guard) are still answered within their 30 s.

/** node-postgres connects to `<host>/.s.PGSQL.<port>` when its host is a folder. */
const SOCKET_PORT = 5432;
/** Unix socket paths are limited to ~107 bytes; a deeper data directory has its socket in the temp folder. */
const MAX_SOCKET_PATH = 100;
/** How long a client may sit inside a transaction without a message before it is rolled back and dropped. */
export const IDLE_IN_TRANSACTION_MS = 10_000;

/** The folder whose `.s.PGSQL.5432` serves the embedded database in `dataDir`. */
export function embeddedSocketDir(dataDir: string): string {
  const absolute = resolve(dataDir.replace(/\/+$/, ""));
  const beside = `${absolute}.socket`;
  if (join(beside, `.s.PGSQL.${SOCKET_PORT}`).length <= MAX_SOCKET_PATH) return beside;
  return join(tmpdir(), `settle-${createHash("sha256").update(absolute).digest("hex").slice(0, 16)}`);
}

export const embeddedSocketFile = (dataDir: string) => join(embeddedSocketDir(dataDir), `.s.PGSQL.${SOCKET_PORT}`);

export function embeddedConnection(dataDir: string): { host: string; port: number; user: string; database: string } {
  return { host: embeddedSocketDir(dataDir), port: SOCKET_PORT, user: "postgres", database: "postgres" };
}

const READY_FOR_QUERY = 0x5a;
const IDLE = 0x49;
const TERMINATE = 0x58;

/**
 * PGlite is one session. pglite-socket queues its clients' messages, but
 * only against each other: this process's own queries could land between a
 * client's BEGIN and COMMIT, or between its Parse and Sync. This view of the
 * database makes a client's exchange hold PGlite's transaction lock (the one
 * this process's queries and transactions take) from its first message until
 * PGlite answers ReadyForQuery idle, so the two never interleave.
 */
function exclusiveView(db: PGlite, idleLimitMs: number, onIdleInTransaction: () => void) {
  let release: (() => void) | null = null;
  let idle: NodeJS.Timeout | undefined;
  const stopIdleTimer = () => {
    clearTimeout(idle);
    idle = undefined;
  };
  const hold = () =>
    new Promise<void>((held) => {
      void db._runExclusiveTransaction(
        () =>
          new Promise<void>((done) => {
            release = done;
            held();
          }),
      );
    });
  const free = () => {
    stopIdleTimer();
    const done = release;
    release = null;
    done?.();
  };
  return {
    get waitReady() {
      return db.waitReady;
    },
    isInTransaction: () => release !== null,
    runExclusive: async <T>(fn: () => Promise<T>): Promise<T> => {
      if (!release) await hold();
      return db.runExclusive(fn);
    },
    execProtocolRawStream: async (message: Uint8Array, options: { onRawData: (data: Uint8Array) => void }) => {
      stopIdleTimer();
      let tail: number[] = [];
      await db.execProtocolRawStream(message, {
        onRawData: (data) => {
          tail = [...tail, ...data.subarray(Math.max(0, data.length - 6))].slice(-6);
          options.onRawData(data);
        },
      });
      // A client that says goodbye (Terminate) gets no ReadyForQuery: its turn ends there, not when its socket closes,
      // which a busy or paused client process may take seconds to do while everyone else waits.
      if (
        message[0] === TERMINATE ||
        (tail.length === 6 && tail[0] === READY_FOR_QUERY && tail[4] === 5 && tail[5] === IDLE)
      )
        free();
      // Still holding PGlite (inside a transaction, or between a Parse and its Sync): the client has this long.
      else if (release) idle = setTimeout(onIdleInTransaction, idleLimitMs).unref();
    },
    // Called by pglite-socket only to roll back a client that left mid-transaction.
    exec: async (sql: string) => {
      const text = Buffer.from(`${sql}\0`);
      const query = Buffer.alloc(5 + text.length);
      query.write("Q", 0);
      query.writeInt32BE(4 + text.length, 1);
      text.copy(query, 5);
      const sync = Buffer.from([0x53, 0, 0, 0, 4]);
      try {
        await db.runExclusive(() => db.execProtocolRaw(new Uint8Array(Buffer.concat([sync, query]))));
      } finally {
        free();
      }
    },
  };
}

/**
 * What pglite-socket 0.2 keeps to itself and the idle limit needs: its connections, and which one's
 * statement ran last (inside a transaction, the one that holds PGlite). Checked when serving starts.
 */
type ServerInternals = {
  handlers: Set<{ handlerId: number; socket: Socket | null }>;
  queryQueue: { lastHandlerId: number | null };
};

function internalsOf(server: object): ServerInternals {
  const internals = server as Partial<ServerInternals>;
  if (!(internals.handlers instanceof Set) || typeof internals.queryQueue !== "object")
    throw new Error("this pglite-socket does not expose its connections: the idle-in-transaction limit cannot work");
  return internals as ServerInternals;
}

/**
 * Serves `db` on the socket of `dataDir`; returns the function that stops serving. Throws (nothing is
 * served) when the socket's folder cannot be claimed for this user.
 */
export async function serveEmbedded(
  db: PGlite,
  dataDir: string,
  idleInTransactionMs = IDLE_IN_TRANSACTION_MS,
): Promise<() => Promise<void>> {
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  claimPrivateDirectory(embeddedSocketDir(dataDir), "The embedded database's socket folder", { noLink: true });
  // A socket file left by a process that was killed would refuse the listen; the data directory's lock is ours.
  rmSync(embeddedSocketFile(dataDir), { force: true });
  let internals: ServerInternals | null = null;
  // The client holding PGlite loses its connection; closing it rolls its transaction back (pglite-socket's own
  // clean-up, through the view's exec) and lets everyone else's statements run.
  const dropIdleClient = () => {
    const holder = internals?.queryQueue.lastHandlerId;
    for (const handler of internals?.handlers ?? []) if (handler.handlerId === holder) handler.socket?.destroy();
  };
  const server = new PGLiteSocketServer({
    db: exclusiveView(db, idleInTransactionMs, dropIdleClient) as unknown as PGlite,
    path: embeddedSocketFile(dataDir),
    maxConnections: 8,
  });
  internals = internalsOf(server);
  await server.start();
  return async () => {
    await server.stop();
    rmSync(embeddedSocketFile(dataDir), { force: true });
  };
}

export const embeddedIsServed = (dataDir: string) => existsSync(embeddedSocketFile(dataDir));

/** What is wrong with the socket a `settle` command is about to trust, or null. */
function socketProblem(dir: string, file: string): string | null {
  const uid = process.getuid?.();
  const folder = lstatSync(dir);
  if (folder.isSymbolicLink()) return "is a symbolic link";
  if (!folder.isDirectory()) return "is not a folder";
  if (uid !== undefined && folder.uid !== uid) return `belongs to another user (uid ${folder.uid})`;
  if ((folder.mode & 0o077) !== 0) return `can be entered by other users (mode 0${(folder.mode & 0o777).toString(8)})`;
  const socket = lstatSync(file);
  if (!socket.isSocket()) return `holds ${file}, which is not a socket`;
  if (uid !== undefined && socket.uid !== uid) return `holds a socket of another user (uid ${socket.uid})`;
  return null;
}

/**
 * Before a `settle` command talks to the socket: its folder is a real folder this user owns that nobody else
 * can enter, and the socket is this user's, so no other account is standing in for the database.
 */
export function assertOwnSocket(dataDir: string): void {
  const dir = embeddedSocketDir(dataDir);
  const problem = socketProblem(dir, embeddedSocketFile(dataDir));
  if (problem) {
    throw new PrivateDirectoryError(
      `The embedded database's socket folder ${dir} ${problem}: another account may be standing in for the database, so Settle will not talk to it. Stop Settle, remove ${dir} and start it again.`,
    );
  }
}
