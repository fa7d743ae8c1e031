import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import type { SettleRecord } from "@settle/client";

// Records Settle could not take are appended to a file on disk, one JSON
// record a line, and sent again when Settle answers: ingest is idempotent by
// event_id, so a record sent twice (one that arrived although its answer was
// lost) is acknowledged as a duplicate and changes nothing. Each process
// appends to a file of its own; a drain first renames a file (atomic: of two
// gateways sharing the directory one gets it), so a record is never sent by
// two drains at once, and a file left by a process that died is taken over.
// The records hold calls' arguments and results before Settle redacts them:
// the directory is the user's own (0700, refused when another user owns it)
// and every file 0600. A record Settle refuses for what it is (too large,
// invalid) would be refused again: it goes to dead-letter.jsonl with the
// reason, once, and the records behind it are sent.

export type Spool = {
  add: (records: SettleRecord[]) => void;
  /** Records waiting, in this process's own file (others' files are counted when drained). */
  pending: () => number;
  /** Sends every spooled record; stops at the first batch Settle does not take, keeping it and the rest. */
  drain: (send: (records: SettleRecord[]) => Promise<void>) => Promise<{ sent: number; left: number }>;
  /** Keeps records Settle refused for good, with the reason, out of the way of the rest. */
  deadLetter: (records: SettleRecord[], reason: string) => void;
  /** Records this process has put in the dead-letter file. */
  deadLettered: () => number;
  dir: string;
  deadLetterFile: string;
};

export class SpoolError extends Error {}

const PRIVATE_FILE = { mode: 0o600 };

export function defaultSpoolDir(env: Record<string, string | undefined>): string {
  const state = env.XDG_STATE_HOME || path.join(homedir(), ".local", "state");
  return path.join(state, "settle-mcp", "spool");
}

const BATCH = 200;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Makes `dir` a directory only its owner can enter, refusing one another user owns (they could read or plant records). */
function claimDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = statSync(dir);
  if (!stat.isDirectory()) throw new SpoolError(`the spool ${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new SpoolError(
      `the spool ${dir} belongs to another user (uid ${stat.uid}, this process runs as ${uid}); set spool_dir to a directory of your own`,
    );
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  // Files an earlier version wrote world-readable.
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  }
}

/** `say` hears of lines the spool sets aside itself (records Settle refuses are the sender's to report). */
export function openSpool(dir: string, say: (message: string) => void = () => {}): Spool {
  claimDirectory(dir);
  const deadLetterFile = path.join(dir, "dead-letter.jsonl");
  let deadCount = 0;
  const own = `spool-${process.pid}-${Date.now()}`;
  let ownFile = path.join(dir, `${own}.jsonl`);
  let ownCount = 0;
  let generation = 0;
  let draining: Promise<{ sent: number; left: number }> | null = null;

  function add(records: SettleRecord[]): void {
    if (records.length === 0) return;
    // Synchronous on purpose: the line is on disk before the call's answer leaves, so a crash loses nothing.
    appendFileSync(ownFile, records.map((r) => JSON.stringify(r)).join("\n") + "\n", PRIVATE_FILE);
    ownCount += records.length;
  }

  /** Files this process may drain: its own, any other process's that is not running, and drains that died. */
  function claimable(): string[] {
    return readdirSync(dir).filter((name) => {
      const spooled = /^spool-(\d+)-\d+(?:-\d+)?\.jsonl$/.exec(name);
      if (spooled) return Number(spooled[1]) === process.pid || !alive(Number(spooled[1]));
      const abandoned = /\.draining-(\d+)$/.exec(name);
      return abandoned !== null && Number(abandoned[1]) !== process.pid && !alive(Number(abandoned[1]));
    });
  }

  async function drainOnce(send: (records: SettleRecord[]) => Promise<void>) {
    let sent = 0;
    if (existsSync(ownFile)) {
      // New records go to a fresh file while this one is sent.
      generation += 1;
      ownFile = path.join(dir, `${own}-${generation}.jsonl`);
      ownCount = 0;
    }
    for (const name of claimable()) {
      const from = path.join(dir, name);
      const taken = path.join(dir, `${name.replace(/\.draining-\d+$/, "")}.draining-${process.pid}`);
      try {
        renameSync(from, taken);
      } catch {
        continue; // another gateway took it
      }
      const records = readRecords(taken);
      let i = 0;
      try {
        for (; i < records.length; i += BATCH) {
          await send(records.slice(i, i + BATCH));
          sent += Math.min(BATCH, records.length - i);
        }
      } catch {
        // Back into this process's own file: sent with the next drain.
        add(records.slice(i));
        unlinkSync(taken);
        return { sent, left: ownCount };
      }
      unlinkSync(taken);
    }
    return { sent, left: ownCount };
  }

  /** The file's records; a line that is not one (cut short by a crash mid-write) is set aside, not left to stop the rest. */
  function readRecords(file: string): SettleRecord[] {
    const records: SettleRecord[] = [];
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line.trim() === "") continue;
      try {
        records.push(JSON.parse(line) as SettleRecord);
      } catch {
        setAside([{ line }], "not a JSON record (a write cut short?)");
        say(`a line of ${path.basename(file)} is not a record (a write cut short?); kept in ${deadLetterFile}`);
      }
    }
    return records;
  }

  function setAside(entries: object[], reason: string): void {
    const at = new Date().toISOString();
    appendFileSync(
      deadLetterFile,
      entries.map((entry) => JSON.stringify({ at, reason, ...entry })).join("\n") + "\n",
      PRIVATE_FILE,
    );
    deadCount += entries.length;
  }

  function deadLetter(records: SettleRecord[], reason: string): void {
    if (records.length > 0)
      setAside(
        records.map((record) => ({ record })),
        reason,
      );
  }

  return {
    dir,
    deadLetterFile,
    add,
    deadLetter,
    deadLettered: () => deadCount,
    pending: () => ownCount,
    drain: (send) => {
      // One drain at a time in a process; a second caller waits for the first.
      draining ??= drainOnce(send).finally(() => {
        draining = null;
      });
      return draining;
    },
  };
}
