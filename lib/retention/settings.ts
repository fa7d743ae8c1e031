import { z } from "zod";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { ApiError } from "../errors";
import { recordAdminAction } from "../audit/admin";

// Retention as data (docs/operations.md "Data retention"): how long a settled invocation keeps its attempts and
// envelopes, and how long the audit trail is kept. The `*` row is the default; a runtime's own row (scope = the
// runtime's id) states both numbers for it, as a policy row does for its class. Without rows the built-in numbers
// hold. Every change is in the admin audit trail.

export const DEFAULT_SCOPE = "*";
export const BUILT_IN_RETENTION = { attempts_days: 90, audit_days: 400 } as const;
export const RETENTION_MAX_DAYS = 3650;

const days = (what: string) =>
  z
    .number()
    .int(`${what} is a whole number of days`)
    .min(1, `${what} is at least 1 day`)
    .max(RETENTION_MAX_DAYS, `${what} is at most ${RETENTION_MAX_DAYS} days`);

export const retentionInputSchema = z
  .object({
    attempts_days: days("attempts_days").describe(
      "Days a settled invocation keeps its attempts and their envelopes after it settled.",
    ),
    audit_days: days("audit_days").describe(
      "Days the audit trail (actions, transitions, admin actions) of settled invocations is kept.",
    ),
  })
  .meta({ id: "RetentionInput" });
export type RetentionInput = z.infer<typeof retentionInputSchema>;

const time = z.string().meta({ format: "date-time" });
export const retentionPeriodSchema = z
  .object({
    attempts_days: z.number().int(),
    audit_days: z.number().int(),
    source: z.enum(["own", "default", "built_in"]).describe("The runtime's own row, the `*` row, or the built-in."),
    updated_at: time.nullable(),
    updated_by: z.string().nullable(),
  })
  .meta({ id: "RetentionPeriod" });
export type RetentionPeriod = z.infer<typeof retentionPeriodSchema>;

export const retentionArchiveSchema = z
  .object({
    name: z.string().describe("The partition retired (`attempts_p2026_08`), or a batch of rows (`attempts_kept_…`)."),
    source: z.string(),
    shelf: z.string().nullable().describe("The month a retired partition held (YYYY-MM-01); null for a batch."),
    phase: z
      .enum(["writing", "detached", "archived", "dropped", "deleted"])
      .describe("How far it got: `dropped` and `deleted` are done; the others resume on the next run."),
    file: z.string().nullable().describe("The archive file, in the server's archive directory."),
    rows: z.number().int().nullable(),
    bytes: z.number().int().nullable(),
    sha256: z.string().nullable(),
    started_at: time,
    finished_at: time.nullable(),
  })
  .meta({ id: "RetentionArchive" });

export const retentionSchema = z
  .object({
    default: retentionPeriodSchema,
    runtimes: z
      .array(retentionPeriodSchema.extend({ runtime: z.string() }))
      .describe("Every runtime with the period in effect for it."),
    archives: z.array(retentionArchiveSchema).describe("The latest archives retention wrote, newest first."),
  })
  .meta({ id: "Retention" });
export type Retention = z.infer<typeof retentionSchema>;

type Row = { scope: string; attempts_days: number; audit_days: number; updated_at: string; updated_by: string };

/** The rows in effect: the default (or the built-in) and each runtime's own, by runtime id. */
export type RetentionSet = { fallback: RetentionPeriod; own: ReadonlyMap<string, RetentionPeriod> };

const periodOf = (r: Row, source: RetentionPeriod["source"]): RetentionPeriod => ({
  attempts_days: r.attempts_days,
  audit_days: r.audit_days,
  source,
  updated_at: new Date(r.updated_at).toISOString(),
  updated_by: r.updated_by,
});

export async function loadRetention(sql: Sql): Promise<RetentionSet> {
  const rows = await sql.query<Row>(
    `SELECT scope, attempts_days, audit_days, updated_at, updated_by FROM retention_settings`,
  );
  const own = new Map<string, RetentionPeriod>();
  let fallback: RetentionPeriod = { ...BUILT_IN_RETENTION, source: "built_in", updated_at: null, updated_by: null };
  for (const r of rows) {
    if (r.scope === DEFAULT_SCOPE) fallback = periodOf(r, "default");
    else own.set(r.scope, periodOf(r, "own"));
  }
  return { fallback, own };
}

/** The period in effect for one runtime. */
export const periodFor = (set: RetentionSet, runtimeId: string): RetentionPeriod =>
  set.own.get(runtimeId) ?? set.fallback;

type ArchiveRow = Omit<z.infer<typeof retentionArchiveSchema>, "rows" | "bytes"> & {
  rows: string | null;
  bytes: string | null;
};

export async function getRetention(db: Db, archives = 20): Promise<Retention> {
  const [set, runtimes, written] = await Promise.all([
    loadRetention(db.driver),
    db.driver.query<{ id: string; name: string }>(`SELECT id::text, name FROM runtimes ORDER BY name`),
    db.driver.query<ArchiveRow>(
      `SELECT name, source, shelf::text AS shelf, phase, file, rows::text AS rows, bytes::text AS bytes, sha256, started_at, finished_at
         FROM retention_archives ORDER BY started_at DESC, name DESC LIMIT $1::int`,
      [archives],
    ),
  ]);
  const num = (v: string | null) => (v === null ? null : Number(v));
  const iso = (v: string | null) => (v === null ? null : new Date(v).toISOString());
  return {
    default: set.fallback,
    runtimes: runtimes.map((r) => ({ runtime: r.name, ...periodFor(set, r.id) })),
    archives: written.map((a) => ({
      ...a,
      rows: num(a.rows),
      bytes: num(a.bytes),
      started_at: new Date(a.started_at).toISOString(),
      finished_at: iso(a.finished_at),
    })),
  };
}

async function runtimeIdOf(sql: Sql, name: string): Promise<string> {
  const [row] = await sql.query<{ id: string }>(`SELECT id::text FROM runtimes WHERE name = $1`, [name]);
  if (!row) throw new ApiError("NOT_FOUND", `There is no runtime named ${name}.`);
  return row.id;
}

async function writeRow(
  db: Db,
  scope: string,
  label: string,
  input: RetentionInput | null,
  actor: string,
  now: Date,
): Promise<boolean> {
  return db.driver.transaction(async (tx) => {
    const [before] = await tx.query<Row>(
      `SELECT scope, attempts_days, audit_days, updated_at, updated_by FROM retention_settings WHERE scope = $1 FOR UPDATE`,
      [scope],
    );
    if (input === null && !before) return false;
    if (input === null) await tx.query(`DELETE FROM retention_settings WHERE scope = $1`, [scope]);
    else {
      await tx.query(
        `INSERT INTO retention_settings (scope, attempts_days, audit_days, updated_at, updated_by)
         VALUES ($1, $2::int, $3::int, $4::timestamptz, $5)
         ON CONFLICT (scope) DO UPDATE SET attempts_days = EXCLUDED.attempts_days, audit_days = EXCLUDED.audit_days,
           updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by`,
        [scope, input.attempts_days, input.audit_days, now.toISOString(), actor],
      );
    }
    const values = (r: { attempts_days: number; audit_days: number } | undefined | null) =>
      r ? { attempts_days: r.attempts_days, audit_days: r.audit_days } : null;
    await recordAdminAction(tx, {
      actor,
      action: "retention_changed",
      targetType: "retention",
      targetId: label,
      before: values(before),
      after: values(input),
    });
    return true;
  });
}

/** Sets the default period (the `*` row). */
export async function putDefaultRetention(db: Db, input: RetentionInput, actor: string, now = new Date()) {
  await writeRow(db, DEFAULT_SCOPE, DEFAULT_SCOPE, retentionInputSchema.parse(input), actor, now);
  return getRetention(db);
}

/** Gives one runtime its own period. */
export async function putRuntimeRetention(
  db: Db,
  runtime: string,
  input: RetentionInput,
  actor: string,
  now = new Date(),
) {
  const id = await runtimeIdOf(db.driver, runtime);
  await writeRow(db, id, runtime, retentionInputSchema.parse(input), actor, now);
  return getRetention(db);
}

/** Puts a runtime back on the default period. */
export async function deleteRuntimeRetention(db: Db, runtime: string, actor: string, now = new Date()) {
  const id = await runtimeIdOf(db.driver, runtime);
  if (!(await writeRow(db, id, runtime, null, actor, now))) {
    throw new ApiError("NOT_FOUND", `${runtime} has no retention period of its own; it uses the default.`);
  }
  return getRetention(db);
}
