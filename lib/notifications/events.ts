import type { InvocationStatus } from "../outcome/status";
import { unsettledStatuses } from "../outcome/status";
import { NO_VERIFIER_REASON, NO_VERIFIER_RUNNING } from "../outcome/verification";

// What a person is told about, pure: which status changes (and scans) become a notification, and how each
// reads. The fan-out hands every transition to notificationEventFor; the stall and duplicate scans name
// their own events.

export const notificationEvents = ["unknown", "approval_needed", "escalated", "possible_duplicate"] as const;
export type NotificationEvent = (typeof notificationEvents)[number];

export const notificationEventLabels: Record<NotificationEvent, string> = {
  unknown: "A new unknown or stalled call",
  approval_needed: "Approval needed",
  escalated: "An SLA escalation",
  possible_duplicate: "A possible duplicate",
};

/** What a transition tells a person, if anything. */
export type TransitionForNotice = {
  fromStatus: InvocationStatus | null;
  status: InvocationStatus;
  /** Whether the call's tool has a verifier: its unknowns are told only when verification ends unsettled. */
  hasVerifier: boolean;
  /** Why Settle's own action made this state, when it says. */
  reason?: string | null;
};

export type Notice = { event: NotificationEvent; why: string };

const unknownStatuses: readonly InvocationStatus[] = ["outcome_unknown", "partially_applied"];

export function notificationEventFor(t: TransitionForNotice): Notice | null {
  // Nobody serves the runtime's verifier: Settle handed the call over without asking, and says why.
  if (t.reason === NO_VERIFIER_REASON && t.status === "escalated")
    return { event: "unknown", why: NO_VERIFIER_RUNNING };
  // A verifier asked and gave up (a failed probe escalates; a partial answer stays partial): now a person must.
  if (t.fromStatus === "verifying" && unsettledStatuses.includes(t.status) && t.status !== "verifying")
    return { event: "unknown", why: "verification ended without settling it" };
  if (unknownStatuses.includes(t.status)) {
    // Already unknown before (a second report, partial after unknown): told once.
    if (t.fromStatus !== null && unsettledStatuses.includes(t.fromStatus)) return null;
    if (t.hasVerifier) return null;
    return {
      event: "unknown",
      why: t.status === "partially_applied" ? "partly applied" : "the outcome is unknown",
    };
  }
  if (t.status === "escalated" && t.fromStatus !== "escalated") return { event: "escalated", why: "escalated" };
  if (t.status === "awaiting_approval" && t.fromStatus !== "awaiting_approval")
    return { event: "approval_needed", why: "waiting for approval" };
  return null;
}
