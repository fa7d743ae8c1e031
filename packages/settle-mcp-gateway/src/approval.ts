import { decisionFields, type Decision, type InvocationDetail } from "@settle/client";
import { isUnreachable, type SettleLink } from "./settle-link.js";

// Human decisions without a custom client. A call whose class (or rule)
// needs approval is recorded as awaiting approval and held, up to
// approval_wait_s, on Settle's long-poll decision endpoint; then it goes
// ahead (approved), is refused (rejected), or is answered "awaiting
// approval" with the console link — the client calls again later and the
// guard lets the approved invocation proceed. When the client supports
// elicitation, its user may choose to keep waiting: an upgrade, never a
// requirement.

export type Elicit = (request: {
  message: string;
  requestedSchema: Record<string, unknown>;
}) => Promise<{ action: string; content?: Record<string, unknown> } | null>;

export type HoldResult =
  /** `arguments`: a person approved these in place of the call's own (approve with edits). */
  | { kind: "proceed"; arguments: Record<string, unknown> | null }
  /** `reply`: a person's words to the agent, which the client gets as the tool's result. */
  | { kind: "rejected" | "escalated"; decidedBy: string | null; reply: string | null }
  | { kind: "waiting"; status: string | null }
  | { kind: "unreachable" };

// An escalation is a person's answer too (it may carry a reply): the hold ends there.
const notWaiting = (d: Decision) => d.decision !== "wait" || d.status === "escalated";

/** Whether a person approved the invocation after its latest request for approval (the guard's new intent hides the status). */
export function approvedSinceRequest(detail: InvocationDetail): boolean {
  const requests = detail.attempts
    .filter((a) => a.phase === "outcome" && (a.envelope as { code?: unknown } | null)?.code === "APPROVAL_REQUIRED")
    .map((a) => Date.parse(a.at));
  if (requests.length === 0) return false;
  const latest = Math.max(...requests);
  return detail.actions.some((a) => a.action === "approve" && a.to_status === "approved" && Date.parse(a.at) >= latest);
}

async function keepWaiting(elicit: Elicit, tool: string, link: string | null): Promise<boolean> {
  const answer = await elicit({
    message: `${tool} is waiting for a person's approval in Settle${link ? ` (${link})` : ""}. Keep waiting for it?`,
    requestedSchema: {
      type: "object",
      properties: {
        keep_waiting: {
          type: "boolean",
          title: "Keep waiting",
          description: "No: the call is answered as awaiting approval; call it again later.",
        },
      },
      required: ["keep_waiting"],
    },
  }).catch(() => null);
  return answer?.action === "accept" && answer.content?.keep_waiting === true;
}

export async function holdForApproval(
  settle: SettleLink,
  invocationId: string,
  options: { waitMs: number; tool: string; link: string | null; elicit: Elicit | null; maxRounds?: number },
): Promise<HoldResult> {
  const rounds = options.elicit ? (options.maxRounds ?? 3) : 1;
  let last: Decision | null = null;
  for (let round = 0; round < rounds; round += 1) {
    const decision = await settle.awaitDecision(invocationId, options.waitMs, notWaiting);
    if (isUnreachable(decision)) return { kind: "unreachable" };
    last = decision;
    const { arguments: edited, reply } = decisionFields(decision);
    if (decision.decision === "proceed") return { kind: "proceed", arguments: edited ?? null };
    if (decision.decision === "abandon")
      return { kind: "rejected", decidedBy: decision.decided_by, reply: reply ?? null };
    if (decision.status === "escalated")
      return { kind: "escalated", decidedBy: decision.decided_by, reply: reply ?? null };
    if (decision.decision !== "wait") break;
    if (!options.elicit || round === rounds - 1 || !(await keepWaiting(options.elicit, options.tool, options.link)))
      break;
  }
  return { kind: "waiting", status: last?.status ?? null };
}
