import {
  catalogPatternSchema,
  listToolCatalog,
  removeToolCatalogEntry,
  setToolCatalogEntry,
} from "@/lib/catalog/catalog";
import { runbookTextSchema, runbookUrlSchema, summaryTemplateSchema } from "@/lib/catalog/templates";
import { effectClasses } from "@/lib/outcome/queue-order";
import {
  describeVerify,
  suggestedVerifyConfig,
  verifyConfigSchema,
  type VerifyConfig,
} from "@/lib/outcome/verification";
import { effectClassSchema } from "@/lib/outcome/vocabulary";
import { stringOption, type Command, type OptionValues } from "../args";
import { withDatabase } from "../database";
import { CliError, refusalsAsCliErrors, UsageError } from "../errors";
import { printLine } from "../io";
import { formatTable, shortTime } from "../table";

// `settle catalog …`: a runtime's tool catalog (tool name or pattern → effect
// class) on the database, as the console's Admin → Tool catalog edits it;
// every change is in the audit trail with actor `cli`.

const classes = effectClasses.join(", ");

function patternOf(raw: string): string {
  const parsed = catalogPatternSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`pattern '${raw}' must be 1-200 characters without control characters`);
  return parsed.data;
}

/** `--verify on`, `none`, or settings as `max_tries=3,every_s=90` (the rest from the suggested ones). */
function verifyOf(raw: string): VerifyConfig | null {
  if (raw === "none") return null;
  const pairs = raw === "on" ? [] : raw.split(",").map((p) => p.trim().split("="));
  const given = Object.fromEntries(pairs.map(([k, v]) => [k, v !== undefined && /^\d+$/.test(v) ? Number(v) : v]));
  const parsed = verifyConfigSchema.safeParse({ ...suggestedVerifyConfig, ...given });
  if (!parsed.success)
    throw new UsageError(
      `--verify '${raw}' must be on, none, or name=seconds pairs of ${Object.keys(suggestedVerifyConfig).join(", ")} (max_tries 1-100, seconds 1-86400)`,
    );
  return parsed.data;
}

/** A text option: undefined keeps what the entry has, `none` clears it, anything else must pass its schema. */
function textOf(values: OptionValues, name: string, schema: typeof runbookUrlSchema): string | null | undefined {
  const raw = stringOption(values, name);
  if (raw === undefined) return undefined;
  if (raw === "none") return null;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new UsageError(`--${name}: ${parsed.error.issues[0]?.message ?? "not valid"}`);
  return parsed.data;
}

export const catalogList: Command = {
  name: "catalog list",
  summary: "list the tool catalog's entries (tool pattern → effect class)",
  help: `Usage: settle catalog list [--runtime <runtime>] [--json]

Lists tool catalog entries by runtime, each runtime's in the order they are
tried: exact names first, then patterns with more literal characters. The
first entry whose pattern matches a tool's name gives its effect class; a tool
no entry matches is a write.

Options:
  --runtime <runtime>   only this runtime's entries
  --json                print a JSON array instead of a table

Example:
  npm run -s settle -- catalog list --runtime billing-agent`,
  options: { runtime: { type: "string" }, json: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const runtime = stringOption(values, "runtime");
    const entries = await withDatabase((db) => listToolCatalog(db, runtime ? { runtime } : {}));
    if (values.json) {
      printLine(io.stdout, JSON.stringify(entries, null, 2));
      return 0;
    }
    if (entries.length === 0) {
      printLine(
        io.stderr,
        `No tool catalog entries${runtime ? ` for ${runtime}` : ""} yet. Add one with: settle catalog set <runtime> '<pattern>' <effect class>`,
      );
      return 0;
    }
    const rows = entries.map((e) => [e.runtime, e.pattern, e.effect_class, shortTime(e.updated_at)]);
    printLine(io.stdout, formatTable(["RUNTIME", "PATTERN", "EFFECT CLASS", "CHANGED"], rows));
    return 0;
  },
};

export const catalogSet: Command = {
  name: "catalog set",
  summary: "give a tool name or pattern an effect class in a runtime's catalog",
  help: `Usage: settle catalog set <runtime> <pattern> <effect class> [--verify <settings>] [--runbook-url <url>] [--runbook <text>] [--summary <template>]

Adds <pattern> to <runtime>'s tool catalog with <effect class> (${classes}),
or changes the class of the entry it already has. A pattern is a tool name,
or one where * stands for any characters: quote it, so the shell leaves the *
alone. Every record naming no effect class takes it from the catalog.

The options set what the console's Admin → Tool catalog sets; one left out
keeps what the entry has, and none clears it:
  --verify <settings>    ask the runtime's verifier about an unknown call: on
                         (after_s=30, every_s=60, max_tries=5, absent_after_s=120,
                         lease_s=30), or pairs such as max_tries=3,every_s=90
                         (the rest as on); none: a person decides
  --runbook-url <url>    where to look a call up, an http(s) URL template with
                         {{idempotency_key}}, {{tool}} or {{args.<path>}}
  --runbook <text>       steps for the person checking by hand
  --summary <template>   a call's one-line summary, e.g. 'refund {{args.amount}}'

Examples:
  npm run -s settle -- catalog set billing-agent 'charge_*' money
  npm run -s settle -- catalog set billing-agent create_refund money --verify on \\
    --runbook-url 'https://dashboard.example.com/refunds?q={{idempotency_key}}'`,
  options: {
    verify: { type: "string" },
    "runbook-url": { type: "string" },
    runbook: { type: "string" },
    summary: { type: "string" },
  },
  args: { min: 3, max: 3 },
  run: async ({ args, values }, io) => {
    const [runtime, rawPattern, rawClass] = args as [string, string, string];
    const pattern = patternOf(rawPattern);
    const effectClass = effectClassSchema.safeParse(rawClass);
    if (!effectClass.success) throw new UsageError(`effect class '${rawClass}' must be one of ${classes}`);
    const rawVerify = stringOption(values, "verify");
    const input = {
      runtime,
      pattern,
      effect_class: effectClass.data,
      ...(rawVerify === undefined ? {} : { verify: verifyOf(rawVerify) }),
      runbook_url: textOf(values, "runbook-url", runbookUrlSchema),
      runbook: textOf(values, "runbook", runbookTextSchema),
      summary: textOf(values, "summary", summaryTemplateSchema),
    };
    const { entry, created } = await refusalsAsCliErrors(() =>
      withDatabase((db) => setToolCatalogEntry(db, input, "cli")),
    );
    const verifier = entry.verify ? `; verifier ${describeVerify(entry.verify)}` : "";
    printLine(
      io.stdout,
      `${created ? "Added" : "Set"} ${entry.pattern} → ${entry.effect_class}${verifier} in runtime ${entry.runtime}'s tool catalog.`,
    );
    return 0;
  },
};

export const catalogRemove: Command = {
  name: "catalog remove",
  summary: "remove a pattern from a runtime's tool catalog",
  help: `Usage: settle catalog remove <runtime> <pattern>

Removes the entry for exactly <pattern> (as 'catalog list' shows it) from
<runtime>'s tool catalog. Its tools then take the next matching entry's class,
or count as writes.

Example:
  npm run -s settle -- catalog remove billing-agent 'charge_*'`,
  options: {},
  args: { min: 2, max: 2 },
  run: async ({ args }, io) => {
    const [runtime, rawPattern] = args as [string, string];
    const pattern = patternOf(rawPattern);
    const removed = await withDatabase(async (db) => {
      const entry = (await listToolCatalog(db, { runtime })).find((e) => e.pattern === pattern);
      return entry ? removeToolCatalogEntry(db, entry.id, "cli") : null;
    });
    if (!removed)
      throw new CliError(
        `runtime ${runtime} has no catalog entry ${pattern} (see: settle catalog list --runtime ${runtime})`,
      );
    printLine(
      io.stdout,
      `Removed ${removed.pattern} (${removed.effect_class}) from runtime ${removed.runtime}'s tool catalog.`,
    );
    return 0;
  },
};
