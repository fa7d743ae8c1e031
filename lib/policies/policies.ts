import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import type { Sql, Tx } from "../db/driver";
import { effectClasses } from "../outcome/queue-order";
import { effectClassSchema } from "../outcome/vocabulary";
import { recordAdminAction } from "../audit/admin";
import type { PolicyValues } from "../outcome/sla";
import { builtInDuplicateWindowS } from "../outcome/duplicates";
import { keptSetting } from "../db/settings-version";

// Policies per effect class (docs/console.md "Policy"): when a queued invocation shows
// as overdue, when it escalates itself, when an approval expires and fails
// closed, and how many different people must approve. Data, not code: an
// admin edits them on /admin/policies or through PUT /api/v1/policies/{class}.
//
// Resolution is per row, never per field: an effect class's own row, else the
// `*` row (the default), else the built-in policy below. A row states the
// whole policy of its class, so `null` in it means "off for this class", not
// "inherit" — an admin can switch escalation off for `read` while the default
// escalates everything else. Deleting a class's row puts it back on the default.

export const DEFAULT_POLICY = "*";
export const policyKeys = [...effectClassSchema.options, DEFAULT_POLICY] as const;
export const policyKeySchema = z.enum(policyKeys);
export type PolicyKey = z.infer<typeof policyKeySchema>;

export type { PolicyValues };

/**
 * With no rows at all Settle changes nothing on its own: no overdue flag, no
 * escalation, no expiry, and one approval suffices (what docs/outcome-model.md §4 does without
 * a policy). Everything stricter is a decision an admin makes and the history records.
 * The one exception is the duplicate window (decision 028): money and destructive
 * writes look a day back, send an hour, the rest not at all.
 */
export function builtInPolicy(key: PolicyKey): PolicyValues {
  return {
    overdue_after_s: null,
    escalate_after_s: null,
    approval_expires_after_s: null,
    approval_quorum: 1,
    duplicate_window_s: builtInDuplicateWindowS[key],
  };
}

export const POLICY_MIN_S = 60;
export const POLICY_MAX_S = 90 * 86_400;
export const POLICY_MAX_QUORUM = 10;

const duration = (what: string) =>
  z
    .number()
    .int(`${what} is a whole number of seconds`)
    .min(POLICY_MIN_S, `${what} is at least ${POLICY_MIN_S} seconds (background jobs run every few seconds)`)
    .max(POLICY_MAX_S, `${what} is at most 90 days`)
    .nullable();

export const policyInputSchema = z
  .object({
    overdue_after_s: duration("overdue after").describe(
      "Seconds in the queue after which it shows as overdue; null: never.",
    ),
    escalate_after_s: duration("escalate after").describe(
      "Seconds in the queue after which Settle escalates it (actor `system`); null: never.",
    ),
    approval_expires_after_s: duration("approval expires after").describe(
      "Seconds awaiting approval after which Settle rejects it (fails closed); null: never.",
    ),
    approval_quorum: z
      .number()
      .int("the quorum is a whole number")
      .min(1, "the quorum is at least 1")
      .max(POLICY_MAX_QUORUM, `the quorum is at most ${POLICY_MAX_QUORUM}`)
      .describe("How many different people must approve."),
    duplicate_window_s: duration("the duplicate window")
      .optional()
      .describe(
        "Seconds within which a write of the same runtime, tool and arguments under a new idempotency key is a possible duplicate (the guard refuses it; a record that came without the guard is flagged); null: off. Left out: the value in effect stays.",
      ),
  })
  .superRefine((p, ctx) => {
    if (p.overdue_after_s !== null && p.escalate_after_s !== null && p.overdue_after_s >= p.escalate_after_s) {
      ctx.addIssue({
        code: "custom",
        path: ["overdue_after_s"],
        message:
          "overdue after must be shorter than escalate after: an invocation shows as overdue before it escalates",
      });
    }
  })
  .meta({ id: "PolicyInput" });
export type PolicyInput = z.infer<typeof policyInputSchema>;

const time = z.string().meta({ format: "date-time" });
const valuesShape = {
  overdue_after_s: z.number().int().nullable(),
  escalate_after_s: z.number().int().nullable(),
  approval_expires_after_s: z.number().int().nullable(),
  approval_quorum: z.number().int(),
  duplicate_window_s: z.number().int().nullable(),
};

export const policySchema = z
  .object({
    effect_class: policyKeySchema,
    ...valuesShape,
    source: z
      .enum(["own", "default", "built_in"])
      .describe("Where the values come from: the class's own row, the `*` row, or Settle's built-in policy."),
    updated_at: time.nullable().describe("When the row in effect was last changed; null for the built-in policy."),
    updated_by: z.string().nullable(),
  })
  .meta({ id: "Policy" });
export type Policy = z.infer<typeof policySchema>;

export const policyChangeSchema = z
  .object({
    effect_class: policyKeySchema,
    actor: z.string(),
    at: time,
    before: z
      .object({ ...valuesShape, duplicate_window_s: valuesShape.duplicate_window_s.optional() })
      .nullable()
      .describe("The class's own row before; null: it had none."),
    after: z
      .object({ ...valuesShape, duplicate_window_s: valuesShape.duplicate_window_s.optional() })
      .nullable()
      .describe("The class's own row after; null: deleted, the class uses the default."),
  })
  .meta({ id: "PolicyChange" });
export type PolicyChange = z.infer<typeof policyChangeSchema>;

export const policyListSchema = z
  .object({
    items: z.array(policySchema),
    changes: z.array(policyChangeSchema).describe("The latest changes, newest first."),
  })
  .meta({ id: "PolicyList" });
export type PolicyList = z.infer<typeof policyListSchema>;

type Row = PolicyValues & { effect_class: string; updated_at: Date | string; updated_by: string | null };
export type PolicySet = ReadonlyMap<string, Row>;

const SELECT_ROWS = `SELECT effect_class, overdue_after_s, escalate_after_s, approval_expires_after_s, approval_quorum, duplicate_window_s, updated_at, updated_by FROM policies`;

/** Every row (a handful): read once per request or job run, then resolved in memory. */
export async function loadPolicies(sql: Sql): Promise<PolicySet> {
  const rows = await sql.query<Row>(SELECT_ROWS);
  return new Map(rows.map((r) => [r.effect_class, r]));
}

// The rows kept in memory per database handle while the settings version says nothing changed
// (lib/db/settings-version.ts): a change anywhere is in force here from the next request after it commits.
const kept = keptSetting<Sql, PolicySet>("policySets");

/** loadPolicies for the write path, which asks on every record that carries an arguments digest. */
export function loadCachedPolicies(sql: Sql): Promise<PolicySet> {
  return kept.get(sql, () => loadPolicies(sql));
}

const valuesOf = (r: PolicyValues): PolicyValues => ({
  overdue_after_s: r.overdue_after_s,
  escalate_after_s: r.escalate_after_s,
  approval_expires_after_s: r.approval_expires_after_s,
  approval_quorum: r.approval_quorum,
  duplicate_window_s: r.duplicate_window_s,
});
const iso = (v: Date | string) => (v instanceof Date ? v : new Date(v)).toISOString();

/** The policy in effect for an invocation's effect class (null: unclassified, which gets the default). */
export function resolvePolicy(set: PolicySet, effectClass: string | null): Policy {
  const key = (policyKeySchema.safeParse(effectClass).data ?? DEFAULT_POLICY) as PolicyKey;
  const own = set.get(key);
  const fallback = key === DEFAULT_POLICY ? undefined : set.get(DEFAULT_POLICY);
  const row = own ?? fallback;
  return {
    effect_class: key,
    ...(row ? valuesOf(row) : builtInPolicy(key)),
    source: own ? "own" : fallback ? "default" : "built_in",
    updated_at: row ? iso(row.updated_at) : null,
    updated_by: row?.updated_by ?? null,
  };
}

/** The quorum an approval of this effect class needs, read in the acting transaction. */
export async function quorumFor(tx: Tx, effectClass: string | null): Promise<number> {
  const rows = await tx.query<Row>(`${SELECT_ROWS} WHERE effect_class = ANY($1::text[])`, [
    [effectClass ?? DEFAULT_POLICY, DEFAULT_POLICY],
  ]);
  return resolvePolicy(new Map(rows.map((r) => [r.effect_class, r])), effectClass).approval_quorum;
}

type ChangeRow = {
  effect_class: string;
  actor: string;
  at: string;
  before: PolicyValues | null;
  after: PolicyValues | null;
};

/** Every class with the policy in effect for it, the default first, and the latest changes. */
export async function listPolicies(db: Db, changes = 20): Promise<PolicyList> {
  const [set, history] = await Promise.all([
    loadPolicies(db.driver),
    db.driver.query<ChangeRow>(
      `SELECT effect_class, actor, at, before, after FROM policy_changes ORDER BY at DESC, id LIMIT $1::int`,
      [changes],
    ),
  ]);
  return {
    // The queue's order of classes: the riskiest first.
    items: ([DEFAULT_POLICY, ...effectClasses] as const).map((key) => resolvePolicy(set, key)),
    changes: history.map((c) => ({
      effect_class: c.effect_class as PolicyKey,
      actor: c.actor,
      at: iso(c.at),
      before: c.before,
      after: c.after,
    })),
  };
}

async function recordChange(
  sql: Sql,
  key: PolicyKey,
  actor: string,
  at: string,
  before: PolicyValues | null,
  after: PolicyValues | null,
) {
  await recordAdminAction(sql, { actor, action: "policy_changed", targetType: "policy", targetId: key, before, after });
  await sql.query(
    `INSERT INTO policy_changes (id, effect_class, actor, at, before, after) VALUES (gen_random_uuid(), $1, $2, $3::timestamptz, $4::jsonb, $5::jsonb)`,
    [key, actor, at, before ? JSON.stringify(before) : null, after ? JSON.stringify(after) : null],
  );
}

async function lockRow(sql: Sql, key: PolicyKey): Promise<Row | undefined> {
  const rows = await sql.query<Row>(`${SELECT_ROWS} WHERE effect_class = $1 FOR UPDATE`, [key]);
  return rows[0];
}

/** Sets a class's own policy (the whole row) and records who changed it from what. */
export async function putPolicy(
  db: Db,
  key: PolicyKey,
  input: PolicyInput,
  actor: string,
  now = new Date(),
): Promise<Policy> {
  const at = now.toISOString();
  const parsed = policyInputSchema.parse(input);
  await db.driver.transaction(async (tx) => {
    const before = await lockRow(tx, key);
    // A body without the window (a client from before it existed) keeps the one in effect for the class.
    const window =
      parsed.duplicate_window_s !== undefined
        ? parsed.duplicate_window_s
        : before
          ? before.duplicate_window_s
          : builtInPolicy(key).duplicate_window_s;
    const values = valuesOf({ ...parsed, duplicate_window_s: window });
    await tx.query(
      `INSERT INTO policies (effect_class, overdue_after_s, escalate_after_s, approval_expires_after_s, approval_quorum, duplicate_window_s, updated_at, updated_by)
       VALUES ($1, $2::int, $3::int, $4::int, $5::int, $6::int, $7::timestamptz, $8)
       ON CONFLICT (effect_class) DO UPDATE SET overdue_after_s = EXCLUDED.overdue_after_s, escalate_after_s = EXCLUDED.escalate_after_s,
         approval_expires_after_s = EXCLUDED.approval_expires_after_s, approval_quorum = EXCLUDED.approval_quorum,
         duplicate_window_s = EXCLUDED.duplicate_window_s, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by`,
      [
        key,
        values.overdue_after_s,
        values.escalate_after_s,
        values.approval_expires_after_s,
        values.approval_quorum,
        values.duplicate_window_s,
        at,
        actor,
      ],
    );
    await recordChange(tx, key, actor, at, before ? valuesOf(before) : null, values);
  });
  return resolvePolicy(await loadPolicies(db.driver), key);
}

/** Removes a class's own policy: it uses the default again (the `*` row: the built-in policy). */
export async function deletePolicy(db: Db, key: PolicyKey, actor: string, now = new Date()): Promise<Policy> {
  const removed = await db.driver.transaction(async (tx) => {
    const before = await lockRow(tx, key);
    if (!before) return false;
    await tx.query(`DELETE FROM policies WHERE effect_class = $1`, [key]);
    await recordChange(tx, key, actor, now.toISOString(), valuesOf(before), null);
    return true;
  });
  if (!removed) {
    throw new ApiError(
      "NOT_FOUND",
      key === DEFAULT_POLICY
        ? "There is no default policy row; the built-in policy is in effect."
        : `${key} has no policy of its own; it uses the default.`,
    );
  }
  return resolvePolicy(await loadPolicies(db.driver), key);
}
