import { z } from "zod";
import { queueStatuses, type InvocationStatus } from "./status";
import { isoOfMs } from "./time";

/** What a policy row says for one effect class (lib/policies keeps the rows; these are the rules that read them). */
export type PolicyValues = {
  overdue_after_s: number | null;
  escalate_after_s: number | null;
  approval_expires_after_s: number | null;
  approval_quorum: number;
  /** Within this many seconds a write of the same runtime, tool and arguments under a new key is a possible duplicate (lib/outcome/duplicates.ts); null: off. */
  duplicate_window_s: number | null;
};

// What a policy means for one queued invocation, computed at read time (never
// stored): when it shows as overdue, when Settle escalates it, when its
// approval expires. The background job (lib/invocations/apply-policies.ts) acts on
// the same rules; its SQL takes its status lists from the constants below.
//
// Time in the queue runs from when the current queue status began: the
// invocation's status_since, or for `stalled` the moment its window passed
// (stall_at) — the same `status_since` the read API shows.

const time = z.string().meta({ format: "date-time" });

export const slaSchema = z
  .object({
    policy: z.string().describe("The policy applied: the effect class's own row, `*` (the default), or `built_in`."),
    overdue: z
      .boolean()
      .describe("Past overdue_at, or past the time it escalates or expires (before the background job gets to it)."),
    overdue_at: time.nullable(),
    escalates_at: time
      .nullable()
      .describe("When Settle escalates it (actor `system`); null when no SLA escalation applies."),
    expires_at: time.nullable().describe("Awaiting approval: when the approval expires and fails closed (rejected)."),
  })
  .meta({ id: "Sla" });
export type Sla = z.infer<typeof slaSchema>;

/**
 * Whether the SLA escalates an invocation in this status. Not an escalated
 * one (it already is), and not an approval whose class has an expiry: that
 * approval fails closed when it expires instead, because an escalated
 * approval can no longer be approved or rejected (docs/outcome-model.md §4) and could only be
 * settled as "not committed" — which would tell the runtime it may go ahead
 * and retry without anyone having approved it.
 */
export function escalatesBySla(
  status: InvocationStatus,
  policy: Pick<PolicyValues, "escalate_after_s" | "approval_expires_after_s">,
): boolean {
  if (policy.escalate_after_s === null || status === "escalated" || !queueStatuses.includes(status)) return false;
  return status !== "awaiting_approval" || policy.approval_expires_after_s === null;
}

/**
 * The stored statuses escalatesBySla can escalate, for the job's SQL: the
 * queue but `escalated`; `stalled` is stored as pending and timed from
 * stall_at, so the job asks for it separately.
 */
export const slaEscalatedStoredStatuses = queueStatuses.filter((s) => s !== "escalated" && s !== "stalled");
/** The one status whose approval can expire (expiresApproval). */
export const APPROVAL_STATUS = "awaiting_approval" satisfies InvocationStatus;

export function expiresApproval(
  status: InvocationStatus,
  policy: Pick<PolicyValues, "approval_expires_after_s">,
): boolean {
  return status === APPROVAL_STATUS && policy.approval_expires_after_s !== null;
}

const plus = (since: string, seconds: number) => isoOfMs(Date.parse(since) + seconds * 1000);

/** `since`: when the current queue status began (the read API's status_since). Null when no timer applies. */
export function slaOf(
  inv: { status: InvocationStatus; status_since: string },
  policy: PolicyValues & { effect_class: string; source: "own" | "default" | "built_in" },
  now: Date,
): Sla | null {
  if (!queueStatuses.includes(inv.status)) return null;
  const overdueAt = policy.overdue_after_s === null ? null : plus(inv.status_since, policy.overdue_after_s);
  const escalatesAt = escalatesBySla(inv.status, policy) ? plus(inv.status_since, policy.escalate_after_s!) : null;
  const expiresAt = expiresApproval(inv.status, policy)
    ? plus(inv.status_since, policy.approval_expires_after_s!)
    : null;
  if (!overdueAt && !escalatesAt && !expiresAt) return null;
  const passed = (at: string | null) => at !== null && Date.parse(at) <= now.getTime();
  return {
    policy: policy.source === "built_in" ? "built_in" : policy.source === "own" ? policy.effect_class : "*",
    overdue: passed(overdueAt) || passed(escalatesAt) || passed(expiresAt),
    overdue_at: overdueAt,
    escalates_at: escalatesAt,
    expires_at: expiresAt,
  };
}

export const approvalsSchema = z
  .object({
    count: z.number().int().describe("Different people who have approved so far."),
    quorum: z.number().int().describe("How many different people must approve (the policy of the effect class)."),
    by: z.array(z.string()),
  })
  .meta({ id: "Approvals" });
export type Approvals = z.infer<typeof approvalsSchema>;

type ActionEntry = {
  action: string;
  actor: string;
  at: string;
  from_status: InvocationStatus;
  to_status: InvocationStatus;
};

/**
 * "1 of 2 approvals" while awaiting approval: the approvals since it last
 * entered that status (the state machine forgets them when it leaves). For
 * display; the state machine decides the quorum again on every approval.
 */
export function approvalsOf(
  inv: { status: InvocationStatus; status_since: string; actions: ActionEntry[] },
  policy: Pick<PolicyValues, "approval_quorum">,
): Approvals | null {
  if (inv.status !== "awaiting_approval") return null;
  const by: string[] = [];
  for (const a of [...inv.actions].reverse()) {
    if (
      a.from_status !== "awaiting_approval" ||
      a.to_status !== "awaiting_approval" ||
      Date.parse(a.at) < Date.parse(inv.status_since)
    )
      break;
    if (a.action === "approve" && !by.includes(a.actor)) by.unshift(a.actor);
  }
  return { count: by.length, quorum: policy.approval_quorum, by };
}
