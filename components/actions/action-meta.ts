import { allowedFrom, type ActionName } from "@/lib/outcome/transitions";
import type { InvocationStatus } from "@/lib/outcome/status";

// How each operator action is named, explained and reached from the keyboard.
// `claim` is `assign` to oneself; `approve_with_edits` is `approve` carrying the arguments the person changed.
// There is deliberately no "retry".

export type ConsoleAction = ActionName | "claim" | "approve_with_edits";

/** The state machine's action a console action takes. */
export const machineAction = (a: ConsoleAction): ActionName =>
  a === "claim" ? "assign" : a === "approve_with_edits" ? "approve" : a;

export const actionMeta: Record<ConsoleAction, { label: string; key: string; help: string }> = {
  request_verification: {
    label: "Request verification",
    key: "v",
    help: "Ask the runtime to probe whether the effect happened.",
  },
  record_verification: {
    label: "Record verification",
    key: "r",
    help: "You checked the system of record: found, absent or inconclusive.",
  },
  mark_reconciled: {
    label: "Mark reconciled",
    key: "m",
    help: "Settle it as committed or not committed, with the evidence.",
  },
  escalate: {
    label: "Escalate",
    key: "e",
    help: "Hand it to a manager, with the reason; you may also tell the agent.",
  },
  approve: { label: "Approve", key: "a", help: "Let the runtime proceed." },
  approve_with_edits: {
    label: "Approve with edits",
    key: "w",
    help: "Change the arguments (say, the amount), then approve: the call runs with yours.",
  },
  reject: {
    label: "Reject",
    key: "d",
    help: "Deny it: the runtime must abandon it; you may tell the agent why or what to do instead.",
  },
  claim: { label: "Claim", key: "c", help: "Assign it to yourself." },
  assign: { label: "Assign", key: "s", help: "Assign it to someone." },
  unassign: { label: "Unassign", key: "u", help: "Nobody owns it any more." },
  comment: { label: "Comment", key: "n", help: "Add a note to the audit trail." },
};

export const consoleActionOrder: ConsoleAction[] = [
  "request_verification",
  "record_verification",
  "mark_reconciled",
  "escalate",
  "approve",
  "approve_with_edits",
  "reject",
  "claim",
  "assign",
  "unassign",
  "comment",
];

/** The actions the state machine allows from this status; the server decides again. */
export function actionsFor(status: InvocationStatus, assignee: string | null, me: string): ConsoleAction[] {
  return consoleActionOrder.filter((a) => {
    if (a === "claim") return assignee !== me;
    if (a === "unassign") return assignee !== null;
    const from = allowedFrom[machineAction(a)];
    return from === null || from.includes(status);
  });
}
