import { env } from "@/lib/env";
import { applyRetention } from "@/lib/retention/retire";
import {
  deleteRuntimeRetention,
  getRetention,
  putDefaultRetention,
  putRuntimeRetention,
  RETENTION_MAX_DAYS,
  type Retention,
} from "@/lib/retention/settings";
import { integerOption, stringOption, type Command } from "../args";
import { withDatabase } from "../database";
import { CliError, refusalsAsCliErrors, UsageError } from "../errors";
import { printLine } from "../io";
import { formatTable, plural, shortTime } from "../table";

// `settle retention …`: how long settled history is kept (docs/operations.md "Data retention"), as the console's
// Admin → Data retention edits it; every change is in the audit trail with actor `cli`.

function printRetention(r: Retention, out: Parameters<typeof printLine>[0]): void {
  const source = { own: "own", default: "default", built_in: "built-in" } as const;
  const rows = [
    [
      "*",
      String(r.default.attempts_days),
      String(r.default.audit_days),
      source[r.default.source],
      shortTime(r.default.updated_at),
    ],
    ...r.runtimes.map((p) => [
      p.runtime,
      String(p.attempts_days),
      String(p.audit_days),
      source[p.source],
      shortTime(p.updated_at),
    ]),
  ];
  printLine(out, formatTable(["RUNTIME", "ATTEMPTS DAYS", "AUDIT DAYS", "FROM", "CHANGED"], rows));
}

export const retentionShow: Command = {
  name: "retention show",
  summary: "show how long settled history is kept, per runtime",
  help: `Usage: settle retention show [--json]

Shows the retention period in effect for every runtime: how many days a
settled invocation keeps its attempts and envelopes after it settled, and how
many days its audit trail is kept. '*' is the default; FROM says whether a
runtime has its own period. Nothing that is not settled, in an open conflict
or under review ever leaves, and the metrics' rollups are kept.

Example:
  npm run -s settle -- retention show`,
  options: { json: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const retention = await withDatabase((db) => getRetention(db));
    if (values.json) printLine(io.stdout, JSON.stringify(retention, null, 2));
    else printRetention(retention, io.stdout);
    return 0;
  },
};

export const retentionSet: Command = {
  name: "retention set",
  summary: "set the default retention period, or a runtime's own",
  help: `Usage: settle retention set --attempts-days <n> --audit-days <n> [--runtime <runtime>]

Sets the default period, or with --runtime that runtime's own (both numbers,
like a policy row). Recorded in the audit trail with actor 'cli'.

Options:
  --attempts-days <n>   days a settled invocation keeps its attempts and envelopes (1-${RETENTION_MAX_DAYS})
  --audit-days <n>      days its audit trail is kept (1-${RETENTION_MAX_DAYS})
  --runtime <runtime>   this runtime only

Example:
  npm run -s settle -- retention set --attempts-days 30 --audit-days 400 --runtime billing-agent`,
  options: { "attempts-days": { type: "string" }, "audit-days": { type: "string" }, runtime: { type: "string" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const days = (name: string) => {
      if (stringOption(values, name) === undefined) throw new UsageError(`--${name} is required`);
      return integerOption(values, name, { min: 1, max: RETENTION_MAX_DAYS, fallback: 0 });
    };
    const input = { attempts_days: days("attempts-days"), audit_days: days("audit-days") };
    const runtime = stringOption(values, "runtime");
    const retention = await withDatabase((db) =>
      refusalsAsCliErrors(() =>
        runtime ? putRuntimeRetention(db, runtime, input, "cli") : putDefaultRetention(db, input, "cli"),
      ),
    );
    printRetention(retention, io.stdout);
    return 0;
  },
};

export const retentionReset: Command = {
  name: "retention reset",
  summary: "put a runtime back on the default retention period",
  help: `Usage: settle retention reset <runtime>

Removes the runtime's own period; it uses the default again. Recorded in the
audit trail with actor 'cli'.

Example:
  npm run -s settle -- retention reset billing-agent`,
  options: {},
  args: { min: 1, max: 1 },
  run: async ({ args }, io) => {
    const retention = await withDatabase((db) =>
      refusalsAsCliErrors(() => deleteRuntimeRetention(db, args[0]!, "cli")),
    );
    printRetention(retention, io.stdout);
    return 0;
  },
};

export const retentionRun: Command = {
  name: "retention run",
  summary: "run retention now: partitions ahead, archive and drop what left retention",
  help: `Usage: settle retention run

Does now what the server's retention job does every quarter of an hour: makes
the coming months' partitions, archives each month out of retention to
SETTLE_ARCHIVE_DIR and drops it, and archives and deletes the kept rows and
audit-trail rows whose period has passed. Resumes a run that stopped part-way.

Example:
  SETTLE_ARCHIVE_DIR=/var/lib/settle/archive npm run -s settle -- retention run`,
  options: {},
  args: { min: 0, max: 0 },
  run: async (_input, io) => {
    const dir = env().SETTLE_ARCHIVE_DIR;
    const run = await withDatabase((db) => applyRetention(db, new Date(), dir));
    if (run.skipped) throw new CliError(`retention is running in another process (${run.skipped})`);
    for (const name of run.partitions_made) printLine(io.stdout, `Made partition ${name}`);
    for (const r of run.retired) {
      const kept = run.steps.find((s) => s.name === r.source && s.step === "detach")?.kept ?? 0;
      printLine(
        io.stdout,
        `Archived ${plural(r.rows, "row")} to ${dir}/${r.file} and dropped ${r.source}` +
          (kept > 0 ? ` (${plural(kept, "row")} of unsettled or recent invocations stay, on the kept shelf)` : ""),
      );
    }
    if (run.kept_archived > 0)
      printLine(io.stdout, `Archived and deleted ${plural(run.kept_archived, "row")} of the kept shelves`);
    if (run.early_archived > 0)
      printLine(
        io.stdout,
        `Archived and deleted ${plural(run.early_archived, "row")} of runtimes with a shorter period than the default`,
      );
    if (run.audit_archived > 0)
      printLine(io.stdout, `Archived and deleted ${plural(run.audit_archived, "audit-trail row")}`);
    printLine(
      io.stderr,
      run.retired.length + run.kept_archived + run.early_archived + run.audit_archived === 0
        ? "Nothing has left retention."
        : `Done; the archive's manifest is ${dir}/manifest.json.`,
    );
    return 0;
  },
};
