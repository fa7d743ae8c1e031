import { z } from "zod";
import { effectClasses } from "../outcome/queue-order";

// What may be done from a Slack message, per effect class: pure, so the settings, the message's buttons and
// the click's check read one table. Defaults (issue 40, decision 042): approve and reject for `send` and
// `create`; recording found / not found (with a note) and escalating for every class; approving a `money` or
// `destructive` call stays in the console until an admin turns it on.

export const slackActions = ["approve", "reject", "record", "escalate"] as const;
export type SlackAction = (typeof slackActions)[number];

export const slackPolicyClasses = [...effectClasses, "unclassified"] as const;
export type SlackPolicyClass = (typeof slackPolicyClasses)[number];

export type SlackActionPolicy = Record<SlackPolicyClass, SlackAction[]>;

const ALL: SlackAction[] = ["approve", "reject", "record", "escalate"];
const NO_DECISION: SlackAction[] = ["record", "escalate"];

export const defaultSlackActionPolicy: SlackActionPolicy = {
  money: NO_DECISION,
  destructive: NO_DECISION,
  send: ALL,
  create: ALL,
  read: NO_DECISION,
  unclassified: NO_DECISION,
};

export const slackActionPolicySchema = z
  .partialRecord(z.enum(slackPolicyClasses), z.array(z.enum(slackActions)).max(slackActions.length))
  .describe(
    "Per effect class (or `unclassified`), which actions a linked person may take from a Slack message: approve, reject, record (found / not found with a note), escalate. A class left out keeps its current list; the defaults allow approve and reject only for send and create.",
  );

/** The policy with a change laid over it. */
export function mergeSlackActionPolicy(
  current: SlackActionPolicy,
  change: Partial<Record<SlackPolicyClass, SlackAction[]>> | undefined,
): SlackActionPolicy {
  const next = { ...current };
  for (const c of slackPolicyClasses) {
    const given = change?.[c];
    if (given) next[c] = slackActions.filter((a) => given.includes(a));
  }
  return next;
}

/** A stored policy read leniently: anything unknown falls back to the defaults. */
export function readSlackActionPolicy(stored: unknown): SlackActionPolicy {
  const parsed = slackActionPolicySchema.safeParse(stored);
  return mergeSlackActionPolicy(defaultSlackActionPolicy, parsed.success ? parsed.data : undefined);
}

export function slackMayTake(policy: SlackActionPolicy, effectClass: string | null, action: SlackAction): boolean {
  const cls = (slackPolicyClasses as readonly string[]).includes(effectClass ?? "")
    ? (effectClass as SlackPolicyClass)
    : "unclassified";
  return policy[cls].includes(action);
}
