import { randomInt } from "node:crypto";
import { publicUrl } from "@/lib/env";
import { integerOption, requiredString, stringOption, type Command } from "../args";
import { EXIT_FAILED } from "../errors";
import { createSettleClient, parseServerUrl } from "../http/settle-client";
import { MAX_RECORDS } from "../http/send-records";
import { printLine, realSleep } from "../io";
import { createProgress } from "../progress";
import { buildPlan, type Plan } from "../simulate/plan";
import { playPlan, type PlayReport } from "../simulate/play";
import { requiredTasks } from "../simulate/required";
import { formatCount as fmt, plural } from "../table";

function describeSent(plan: Plan): string[] {
  const phases = new Map<string, number>();
  for (const line of plan.lines) {
    const record = JSON.parse(line.text) as { phase?: string; task?: string };
    const kind =
      record.task !== undefined
        ? "source article 002 (docs/outcome-model.md) log lines"
        : `${record.phase ?? "outcome"}s`;
    phases.set(kind, (phases.get(kind) ?? 0) + 1);
  }
  const dialects = [...plan.ctx.dialects.entries()].sort((a, b) => b[1] - a[1]).map(([d, n]) => `${d} ${fmt(n)}`);
  return [
    `  ${[...phases.entries()].map(([k, n]) => `${fmt(n)} ${k}`).join(", ")}`,
    `  ${plural(plan.resent.size, "record")} sent twice on purpose, ${fmt(plan.outOfOrder)} tasks or records out of order, ${plan.malformedLine ? 1 : 0} malformed`,
    `  envelopes by dialect: ${dialects.join(", ")}`,
  ];
}

function printReport(io: Parameters<Command["run"]>[1], plan: Plan, report: PlayReport, seconds: string): number {
  const { sent } = report;
  printLine(
    io.stdout,
    `Sent ${plural(plan.lines.length, "record")} for ${plural(plan.ctx.tasks.length, "task")} (${plural(plan.ctx.invocations.length, "invocation")}):`,
  );
  for (const line of describeSent(plan)) printLine(io.stdout, line);
  printLine(
    io.stdout,
    `  then ${plural(report.followUpRecords, "record")} in ${plural(report.followUpRounds, "follow-up round")}, acting on Settle's answers (probes, allowed retries, waits)`,
  );
  printLine(
    io.stdout,
    `Settle answered ${plural(sent.requests, "request")}: ${fmt(sent.accepted)} accepted, ${fmt(sent.duplicates)} duplicates, ${fmt(sent.rejected)} rejected`,
  );
  const statuses = [...report.statuses.entries()].sort((a, b) => b[1] - a[1]).map(([s, n]) => `${fmt(n)} ${s}`);
  printLine(
    io.stdout,
    `Settle shows the run's ${plural(report.invocationsSeen, "invocation")} as: ${statuses.join(", ")}`,
  );
  printLine(io.stdout, "");
  for (const check of report.checks) {
    printLine(io.stdout, `${check.problems.length === 0 ? "PASS" : "FAIL"}  ${check.name}`);
    for (const problem of check.problems) printLine(io.stdout, `        ${problem}`);
  }
  const failed = report.checks.filter((c) => c.problems.length > 0).length;
  printLine(io.stdout, "");
  printLine(io.stdout, `${report.checks.length - failed} passed, ${failed} failed (${seconds} s)`);
  return failed > 0 ? EXIT_FAILED : 0;
}

export const simulate: Command = {
  name: "simulate",
  summary: "play a simulated agent runtime against the API and check Settle's answers",
  help: `Usage: settle simulate --url <url> --key <key> [--tasks <n>] [--seed <s>]

Plays an agent runtime's tasks against Settle's API and checks what Settle
makes of them. The first ${requiredTasks.length} tasks cover source article 002 (docs/outcome-model.md)'s six failure fixtures
and attempt log lines, source article 004 (docs/outcome-model.md)'s post-dispatch evidence failure, stalled and
in-flight intents, and every envelope dialect of docs/outcome-model.md §3 (plus one malformed
record); the rest are business workflows with realistic outcomes. Records are
written intent-first, spread over the last hour, some out of order and some
twice. The runtime then acts on Settle's answers (probes unknown outcomes,
retries only when allowed, waits until not_before), reads everything back
and prints a PASS/FAIL line per check.

The same --seed plays the same run (same ids and envelopes; times follow the
clock), so replaying it only adds duplicates. Without --seed a random one is
used and printed.

Options:
  --url <url>     Settle's address (default: SETTLE_PUBLIC_URL, else http://localhost:$PORT)
  --key <key>     a runtime ingest key (settle keys create <runtime>)
  --tasks <n>     tasks to play, 1-100000 (default 20)
  --seed <s>      0-4294967295 (default: random)
  --batch <n>     records per request, 1-${MAX_RECORDS} (default ${MAX_RECORDS})

Exit code 0 when every check passed, 1 when one failed, 2 when Settle could
not be reached or refused the key.

Example:
  npm run -s settle -- simulate --url http://localhost:3000 --key "$KEY" --tasks 200 --seed 7`,
  options: {
    url: { type: "string" },
    key: { type: "string" },
    tasks: { type: "string" },
    seed: { type: "string" },
    batch: { type: "string" },
  },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const url = parseServerUrl(stringOption(values, "url") ?? publicUrl());
    const key = requiredString(values, "key");
    const tasks = integerOption(values, "tasks", { min: 1, max: 100_000, fallback: 20 });
    const seed = integerOption(values, "seed", { min: 0, max: 0xffffffff, fallback: randomInt(0, 2 ** 31) });
    const batchSize = integerOption(values, "batch", { min: 1, max: MAX_RECORDS, fallback: MAX_RECORDS });

    const started = Date.now();
    const plan = buildPlan({ tasks, seed, now: started });
    printLine(
      io.stderr,
      `simulate: seed ${seed} (run ${plan.runTag}), ${plural(tasks, "task")}, ${plural(plan.lines.length, "record")} → ${url.origin}`,
    );
    if (plan.requiredPlayed < requiredTasks.length) {
      printLine(
        io.stderr,
        `simulate: only the first ${plan.requiredPlayed} of the ${requiredTasks.length} required scenarios fit in ${plural(tasks, "task")}; use --tasks ${requiredTasks.length} or more for all`,
      );
    }
    const progress = createProgress(io, "simulate", plan.lines.length);
    const client = createSettleClient({ url, key, retries: 5, sleep: io.sleep ?? realSleep, onWait: progress.note });
    try {
      const report = await playPlan(client, plan, {
        batchSize,
        onProgress: (t) => progress.update({ done: t.records, total: plan.lines.length, ...t }),
      });
      progress.stop();
      return printReport(io, plan, report, ((Date.now() - started) / 1000).toFixed(1));
    } catch (error) {
      progress.stop();
      throw error;
    }
  },
};
