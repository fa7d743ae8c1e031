import { allowedFrom, type ActionName } from "@/lib/outcome/transitions";
import type { InvocationStatus } from "@/lib/outcome/status";

// How each operator action is named, explained and reached from the keyboard.
// `claim` is `assign` to oneself. There is deliberately no "retry".

export type ConsoleAction = ActionName | "claim";

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
  escalate: { label: "Escalate", key: "e", help: "Hand it to a manager, with the reason." },
  approve: { label: "Approve", key: "a", help: "Let the runtime proceed." },
  reject: { label: "Reject", key: "d", help: "Deny it: the runtime must abandon it." },
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
    const from = allowedFrom[a];
    return from === null || from.includes(status);
  });
}
