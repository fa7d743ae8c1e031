import type { Db } from "../db/client";
import { formatDuration } from "../outcome/durations";
import { actOnInvocation } from "./act";
import type { OperatorAction } from "../outcome/actions";
import { DEFAULT_POLICY, loadPolicies, type PolicySet, type PolicyValues } from "../policies/policies";
import { APPROVAL_STATUS, slaEscalatedStoredStatuses } from "../outcome/sla";
import { sqlWords } from "../outcome/queue-order";

// The policy job: escalates what has waited in the queue past its SLA and
// rejects approvals that expired (fail closed), as actor `system`, through the
// one state machine (actOnInvocation), so each is an audit entry like a
// person's action. The rules are lib/outcome/sla.ts's; the SQL below takes its
// status lists from there.
//
// Marker for metrics (SLA breaches): every entry this job writes in
// invocation_actions has actor = 'system' and payload->>'policy' =
//   'sla'             — action 'escalate': in the queue longer than escalate_after_s;
//   'approval_expiry' — action 'reject': awaiting approval longer than approval_expires_after_s.
// The payload also has policy_class ('money', … or '*'), after_s (the policy's
// threshold) and waited_s (time in the queue when it acted). Documented in the README ("Policy").
//
// Several app instances run this at once: both may pick the same invocation,
// and actOnInvocation's version check lets exactly one act; the other gets
// VERSION_CONFLICT and skips it. Nothing is kept in memory between runs.

export const SYSTEM_ACTOR = "system";
/** Invocations acted on per rule per run; the rest wait for the next run (every SETTLE_JOBS_INTERVAL_S). */
export const POLICY_BATCH = 100;

type Rule = "sla" | "approval_expiry";
type Column = keyof Pick<PolicyValues, "escalate_after_s" | "approval_expires_after_s">;

/** The threshold in effect for a row: its class's own policy row, else the default `*` row (resolvePolicy, in SQL). */
const resolved = (column: Column) => `(CASE WHEN own.effect_class IS NULL THEN d.${column} ELSE own.${column} END)`;

type Candidate = {
  invocation_id: string;
  runtime_id: string;
  version: number;
  since: Date | string;
  after_s: number;
  policy: string;
};

/**
 * Queued invocations whose time in the queue (since `sinceColumn`) exceeds the
 * policy's `column`. Bounded below by the smallest threshold of any row, so
 * PostgreSQL reads the (status, status_since) or (status, stall_at) index range
 * of rows old enough to possibly be due, oldest first, not the table.
 */
async function findDue(
  db: Db,
  now: Date,
  set: PolicySet,
  q: { statuses: string[]; sinceColumn: "status_since" | "stall_at"; column: Column; extra?: string },
): Promise<Candidate[]> {
  const thresholds = [...set.values()].map((p) => p[q.column]).filter((s): s is number => s !== null);
  if (thresholds.length === 0) return [];
  const bound = new Date(now.getTime() - Math.min(...thresholds) * 1000).toISOString();
  const since = `i.${q.sinceColumn}`;
  // Stalls are read from the partial index of pending invocations, which only the literal predicate matches.
  const pendingOnly = q.statuses.length === 1 && q.statuses[0] === "pending";
  return db.driver.query<Candidate>(
    `WITH d AS (SELECT * FROM policies WHERE effect_class = '${DEFAULT_POLICY}')
     SELECT i.invocation_id, i.runtime_id::text AS runtime_id, i.version, ${since} AS since,
            ${resolved(q.column)} AS after_s, COALESCE(own.effect_class, d.effect_class) AS policy
       FROM invocations i
       LEFT JOIN policies own ON own.effect_class = i.effect_class
       LEFT JOIN d ON true
      WHERE ${pendingOnly ? "i.status = 'pending' AND $2::text[] IS NOT NULL" : "i.status = ANY($2::text[])"} AND ${since} <= $3::timestamptz
        AND ${resolved(q.column)} IS NOT NULL
        AND ${since} + ${resolved(q.column)} * interval '1 second' <= $1::timestamptz
        ${q.extra ?? ""}
      ORDER BY ${since}
      LIMIT $4::int`,
    [now.toISOString(), q.statuses, bound, POLICY_BATCH],
  );
}

const policyName = (p: string) => (p === DEFAULT_POLICY ? "default" : p);

function actionFor(rule: Rule, c: Candidate, waitedS: number): OperatorAction {
  const waited = formatDuration(waitedS);
  const after = formatDuration(c.after_s);
  return rule === "sla"
    ? {
        action: "escalate",
        note: `SLA: in the queue for ${waited} (policy ${policyName(c.policy)}: escalate after ${after})`,
      }
    : {
        action: "reject",
        note: `Approval expired after ${waited} without a decision (policy ${policyName(c.policy)}: approvals expire after ${after}); rejected, failing closed.`,
      };
}

export type PolicyRun = { escalated: number; expired: number; skipped: number };

async function actOn(db: Db, now: Date, rule: Rule, candidates: Candidate[], run: PolicyRun): Promise<void> {
  for (const c of candidates) {
    const waitedS = Math.floor((now.getTime() - new Date(c.since).getTime()) / 1000);
    try {
      const outcome = await actOnInvocation(
        db,
        { invocationId: c.invocation_id, runtimeId: c.runtime_id },
        actionFor(rule, c, waitedS),
        {
          actor: SYSTEM_ACTOR,
          version: Number(c.version),
          now,
          audit: { policy: rule, policy_class: c.policy, after_s: Number(c.after_s), waited_s: waitedS },
        },
      );
      // A refusal means someone (a person, a record, another instance) changed it since it was read: nothing to do.
      if (outcome.ok) run[rule === "sla" ? "escalated" : "expired"] += 1;
      else run.skipped += 1;
    } catch (error) {
      // One invocation that cannot be acted on must not hold up the others; it is tried again next run.
      run.skipped += 1;
      console.error(
        `[settle] policy ${rule} on ${c.invocation_id}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

/**
 * One pass: expire approvals first (so an approval due both ways fails closed
 * rather than escalating), then escalate by SLA. `now` is the job's clock.
 */
export async function applyPolicies(db: Db, now: Date): Promise<PolicyRun> {
  const run: PolicyRun = { escalated: 0, expired: 0, skipped: 0 };
  const set = await loadPolicies(db.driver);
  if (set.size === 0) return run;

  const expired = await findDue(db, now, set, {
    statuses: [APPROVAL_STATUS],
    sinceColumn: "status_since",
    column: "approval_expires_after_s",
  });
  await actOn(db, now, "approval_expiry", expired, run);

  // escalatesBySla (lib/outcome/sla.ts): every queue status but escalated; an approval only when its class has no expiry.
  const stored = await findDue(db, now, set, {
    statuses: [...slaEscalatedStoredStatuses],
    sinceColumn: "status_since",
    column: "escalate_after_s",
    extra: `AND NOT (i.status = ${sqlWords([APPROVAL_STATUS])} AND ${resolved("approval_expires_after_s")} IS NOT NULL)`,
  });
  // `stalled` is stored as pending: its time in the queue starts at stall_at.
  const stalled = await findDue(db, now, set, {
    statuses: ["pending"],
    sinceColumn: "stall_at",
    column: "escalate_after_s",
  });
  await actOn(db, now, "sla", [...stored, ...stalled], run);
  return run;
}
