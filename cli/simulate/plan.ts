import { createHash } from "node:crypto";
import { toLine, type Line } from "../http/send-records";
import { playBackgroundTask } from "./background";
import { createWorld, type SimContext, type SimRecord } from "./recorder";
import { checkEveryDialect, requiredTasks } from "./required";
import { createRng } from "./rng";

// Everything a run sends first, in the order it is sent: the required tasks,
// then the background ones, with some records shuffled within their task,
// some delivered late and some delivered twice — as real runtimes do.

export type Plan = {
  seed: number;
  runTag: string;
  ctx: SimContext;
  lines: Line[];
  /** Line numbers that repeat an earlier line on purpose: Settle must answer "duplicate". */
  resent: Set<number>;
  outOfOrder: number;
  malformedLine: number | null;
  requiredPlayed: number;
};

export type PlanOptions = { tasks: number; seed: number; now: number };

const OUT_OF_ORDER = 0.2;
const LATE = 0.03;
const TWICE = 0.04;

/** A short tag in every task id, so runs with different seeds never share an invocation. */
export function runTagOf(seed: number): string {
  const n = Number.parseInt(createHash("sha256").update(`settle-simulate:${seed}`).digest("hex").slice(0, 8), 16);
  return (n % 36 ** 4).toString(36).padStart(4, "0");
}

function isMalformed(record: SimRecord): boolean {
  return !("task_id" in record) && !("task" in record);
}

export function buildPlan({ tasks, seed, now }: PlanOptions): Plan {
  const rng = createRng(seed);
  const runTag = runTagOf(seed);
  const ctx: SimContext = {
    rng,
    runTag,
    now,
    tasks: [],
    world: createWorld(),
    invocations: [],
    checks: [],
    dialects: new Map(),
  };
  // Tasks started between 8 and 60 minutes ago, so that everything they do happened in the last hour.
  const startTime = () => now - rng.int(8 * 60_000, 60 * 60_000);

  const requiredPlayed = Math.min(tasks, requiredTasks.length);
  requiredTasks.slice(0, requiredPlayed).forEach((t, i) => t.play(ctx, i + 1, startTime()));
  if (requiredPlayed === requiredTasks.length) checkEveryDialect(ctx);
  for (let n = requiredPlayed + 1; n <= tasks; n += 1) playBackgroundTask(ctx, n, startTime());

  let outOfOrder = 0;
  const stream: SimRecord[] = [];
  const late: SimRecord[] = [];
  for (const task of ctx.tasks) {
    const records = [...task.records];
    if (records.length > 1 && rng.chance(OUT_OF_ORDER)) {
      rng.shuffle(records);
      outOfOrder += 1;
    }
    for (const record of records) {
      if (!isMalformed(record) && rng.chance(LATE)) late.push(record);
      else stream.push(record);
    }
  }
  outOfOrder += late.length;
  stream.push(...late);

  // Copies go somewhere after their original: the same batch or a later one.
  const sends: Array<{ record: SimRecord; resend: boolean }> = stream.map((record) => ({ record, resend: false }));
  for (let i = sends.length - 1; i >= 0; i -= 1) {
    const { record } = sends[i]!;
    if (isMalformed(record) || !rng.chance(TWICE)) continue;
    const at = rng.int(i + 1, Math.min(sends.length, i + 1_000));
    sends.splice(at, 0, { record, resend: true });
  }

  const resent = new Set<number>();
  let malformedLine: number | null = null;
  const lines = sends.map(({ record, resend }, i) => {
    if (resend) resent.add(i + 1);
    if (isMalformed(record)) malformedLine = i + 1;
    return toLine(i + 1, JSON.stringify(record));
  });
  return { seed, runTag, ctx, lines, resent, outOfOrder, malformedLine, requiredPlayed };
}
