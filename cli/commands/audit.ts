import { ONE_MOMENT, verifyChains, type ChainReport } from "@/lib/chain/verify";
import { stringOption, type Command } from "../args";
import { withDatabase } from "../database";
import { UsageError } from "../errors";
import { printLine } from "../io";
import { formatCount, formatTable } from "../table";

// `settle audit verify`: walks the tamper-evident trail (docs/audit.md) and says whether every chain is whole.

const where = (r: ChainReport) => (r.name === "admin" ? "the admin audit" : `runtime ${r.name}`);

function describeBreak(r: ChainReport): string {
  const b = r.broken!;
  const what = b.kind ? `${b.kind} ${b.key}` : "";
  const place = b.seq > 0 ? `entry #${b.seq}${what ? ` (${what})` : ""}` : what;
  return `${where(r)}: ${place} ${b.reason}`;
}

export const auditVerify: Command = {
  name: "audit verify",
  summary: "check that the audit trail's hash chains are whole",
  help: `Usage: settle audit verify [--runtime <runtime>] [--from <time>] [--json]

Walks each runtime's hash chain (its attempts, status changes, operator and
Settle actions, guard answers) and the admin audit's: every entry's content
is hashed again and its link to the entry before it checked; places retention
archived are crossed by their checkpoints. Exits 0 when every chain is whole,
1 naming the first broken entry of each chain that is not.

Options:
  --runtime <runtime>   only this runtime's chain (name or id)
  --from <time>         start at the first entry written at or after this time
                        (ISO 8601); the link to the entry before it is not checked
  --json                print JSON instead of a table

Example:
  npm run -s settle -- audit verify --runtime billing-agent --from 2026-12-01`,
  options: { runtime: { type: "string" }, from: { type: "string" }, json: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const fromText = stringOption(values, "from");
    const from = fromText === undefined ? undefined : new Date(fromText);
    if (from && Number.isNaN(from.getTime())) throw new UsageError(`--from takes a time (ISO 8601), not ${fromText}`);
    const runtime = stringOption(values, "runtime");
    const reports = await withDatabase((db) =>
      db.driver.transaction((tx) => verifyChains(tx, { runtime, from }), { settings: ONE_MOMENT }),
    );
    if (runtime && reports.length === 0) throw new UsageError(`No runtime ${runtime}.`);
    const broken = reports.filter((r) => r.broken);
    if (values.json) printLine(io.stdout, JSON.stringify(reports, null, 2));
    else {
      const rows = reports.map((r) => [
        r.name,
        formatCount(r.checked),
        formatCount(r.archived),
        r.head === 0 ? "-" : `#${r.from}–#${r.head}`,
        r.broken ? `BROKEN at #${r.broken.seq}` : "whole",
      ]);
      printLine(io.stdout, formatTable(["CHAIN", "ENTRIES CHECKED", "ARCHIVED", "PLACES", "STATE"], rows));
    }
    for (const r of broken) printLine(io.stderr, describeBreak(r));
    return broken.length === 0 ? 0 : 1;
  },
};
