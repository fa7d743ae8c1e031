import { createHash } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";

// The embedded database, served to the other processes of this machine
// (decision 032): the process that holds the data directory (the server, or
// whichever `settle` command opened it first) listens on a Unix socket beside
// it, and a `settle` command that finds the directory in use talks PostgreSQL
// to that socket instead of failing. A Unix socket, not TCP: only this
// machine's users who may read the data directory's folder can reach it.

/** node-postgres connects to `<host>/.s.PGSQL.<port>` when its host is a folder. */
const SOCKET_PORT = 5432;
/** Unix socket paths are limited to ~107 bytes; a deeper data directory has its socket in the temp folder. */
const MAX_SOCKET_PATH = 100;

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
function exclusiveView(db: PGlite) {
  let release: (() => void) | null = null;
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

/** Serves `db` on the socket of `dataDir`; returns the function that stops serving. */
export async function serveEmbedded(db: PGlite, dataDir: string): Promise<() => Promise<void>> {
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  const dir = embeddedSocketDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // A socket file left by a process that was killed would refuse the listen; the data directory's lock is ours.
  rmSync(embeddedSocketFile(dataDir), { force: true });
  const server = new PGLiteSocketServer({
    db: exclusiveView(db) as unknown as PGlite,
    path: embeddedSocketFile(dataDir),
    maxConnections: 8,
  });
  await server.start();
  return async () => {
    await server.stop();
    rmSync(embeddedSocketFile(dataDir), { force: true });
  };
}

export const embeddedIsServed = (dataDir: string) => existsSync(embeddedSocketFile(dataDir));
