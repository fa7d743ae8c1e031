import type { InvocationView } from "../invocations/read";
import { invocationHref } from "../invocations/links";
import { statusLabels } from "../outcome/labels";
import { allowedFrom } from "../outcome/transitions";
import { redact } from "../redact/redact";
import { editableText, shownArguments } from "./editable";
import { slackMayTake, type SlackAction, type SlackActionPolicy } from "./policy";

// How a call reads in Slack, pure: an approval request (summary, arguments redacted, runbook, Approve /
// Approve with edits / Reject / Escalate), an unknown (Found / Not found, each asking for a note, Escalate), and
// once decided the buttons replaced by who decided what and when (with an edit's changed members and a reply to
// the agent). Every button carries what it was drawn for (the invocation, its version, the digest of the
// arguments shown: a pending edit's while one waits for more approvals), so a click on a call that changed since
// changes nothing. The modals the buttons open are lib/slack/modals.ts.

export type Bound = { i: string; r: string; v: number; d: string | null };
export const ACTION_IDS = {
  approve: "settle_approve",
  approve_edit: "settle_approve_edit",
  reject: "settle_reject",
  escalate: "settle_escalate",
  found: "settle_found",
  not_found: "settle_not_found",
} as const;
export type SlackMessage = { text: string; blocks: unknown[] };

/** Slack's mrkdwn control characters: upstream text is shown, never read as markup or a mention. */
export const escapeMrkdwn = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** The digest of the arguments an approval now approves: a pending edit's, else the call's. */
export const shownDigest = (v: Pick<InvocationView, "args_digest" | "arguments_edit">): string | null =>
  v.arguments_edit?.state === "pending" ? v.arguments_edit.digest : v.args_digest;

export const boundOf = (v: InvocationView): Bound => ({
  i: v.invocation_id,
  r: v.runtime,
  v: v.version,
  d: shownDigest(v),
});

export function readBound(value: unknown): Bound | null {
  if (typeof value !== "string" || value.length > 2000) return null;
  try {
    const b = JSON.parse(value) as Partial<Bound>;
    if (typeof b.i !== "string" || typeof b.r !== "string" || !Number.isInteger(b.v)) return null;
    return { i: b.i, r: b.r, v: b.v!, d: typeof b.d === "string" ? b.d : null };
  } catch {
    return null;
  }
}

const when = (iso: string) => {
  const s = Math.floor(Date.parse(iso) / 1000);
  return `<!date^${s}^{date_short} {time}|${iso.slice(0, 16).replace("T", " ")} UTC>`;
};

const ARGS_CHARS = 2500;

function argumentsBlock(v: InvocationView): unknown | null {
  const args = shownArguments(v);
  if (args == null) return null;
  let text = JSON.stringify(redact(args), null, 1);
  if (text.length > ARGS_CHARS) text = `${text.slice(0, ARGS_CHARS)}…`;
  const edit = v.arguments_edit;
  const title = edit
    ? `*Arguments* (edited by ${escapeMrkdwn(edit.by)}${edit.state === "pending" ? ", awaiting approval" : ""})`
    : "*Arguments*";
  return { type: "section", text: { type: "mrkdwn", text: `${title}\n\`\`\`${escapeMrkdwn(text)}\`\`\`` } };
}

function button(text: string, actionId: string, bound: Bound, style?: "primary" | "danger", confirm?: unknown) {
  return {
    type: "button",
    text: { type: "plain_text", text },
    action_id: actionId,
    value: JSON.stringify(bound),
    ...(style ? { style } : {}),
    ...(confirm ? { confirm } : {}),
  };
}

export function headline(v: InvocationView): string {
  const what = escapeMrkdwn(v.summary ?? v.tool);
  const cls = v.effect_class ? ` · ${v.effect_class}` : "";
  return `*${what}*\n\`${escapeMrkdwn(v.tool)}\` · ${escapeMrkdwn(v.runtime)}${cls} · ${statusLabels[v.status]}`;
}

type ActionEntry = InvocationView["actions"][number];

/** What an action carried beyond its note: the members an edit changed, the message to the agent. */
function carried(a: ActionEntry): string {
  const changes = a.edit?.changes ?? [];
  const paths = changes.slice(0, 8).map((c) => escapeMrkdwn(c.path));
  const edited =
    changes.length > 0
      ? ` — with edits: ${paths.join(", ")}${changes.length > paths.length ? ` and ${changes.length - paths.length} more` : ""}`
      : "";
  const reply = a.reply ? ` — to the agent: “${escapeMrkdwn(a.reply.slice(0, 500))}”` : "";
  return `${edited}${reply}`;
}

/** Who decided what, and when: the latest action that brought it to its status, or its settlement. */
export function decisionLine(v: InvocationView): string {
  if (v.resolution && v.status === "reconciled") {
    const by = v.resolution.actor ?? v.resolution.by;
    return `Settled by ${escapeMrkdwn(String(by))} at ${when(v.resolution.at)} — ${v.resolution.commit_state.replace("_", " ")}`;
  }
  const last = [...v.actions].reverse().find((a) => a.to_status === v.status && a.from_status !== a.to_status);
  const label = statusLabels[v.status];
  if (!last) return `${label} since ${when(v.status_since)}`;
  const note = last.note ? ` — “${escapeMrkdwn(last.note)}”` : "";
  return `${label} by ${escapeMrkdwn(last.actor)} at ${when(last.at)}${note}${carried(last)}`;
}

function may(policy: SlackActionPolicy, v: InvocationView, action: SlackAction, name: keyof typeof allowedFrom) {
  return slackMayTake(policy, v.effect_class, action) && (allowedFrom[name]?.includes(v.status) ?? true);
}

/** The message for a call as it is now: buttons while a person can act from Slack, the decision after. */
export function slackMessageFor(
  v: InvocationView,
  policy: SlackActionPolicy,
  baseUrl: string,
  note?: string,
): SlackMessage {
  const link = `${baseUrl}${invocationHref(v.invocation_id, v.runtime)}`;
  const blocks: unknown[] = [{ type: "section", text: { type: "mrkdwn", text: headline(v) } }];
  const args = argumentsBlock(v);
  if (args) blocks.push(args);
  const links = [`<${link}|Open in Settle>`];
  if (v.runbook?.url) links.push(`<${v.runbook.url}|Runbook>`);
  const context: string[] = [links.join(" · ")];
  const bound = boundOf(v);
  const buttons: unknown[] = [];
  const awaiting = v.status === "awaiting_approval";
  const unknown = !awaiting && (allowedFrom.record_verification?.includes(v.status) ?? false);
  if (awaiting) {
    if (v.approvals && v.approvals.count > 0)
      context.push(
        `Approved so far by ${v.approvals.by.map(escapeMrkdwn).join(", ")} (${v.approvals.count} of ${v.approvals.quorum})`,
      );
    if (may(policy, v, "approve", "approve"))
      buttons.push(
        button("Approve", ACTION_IDS.approve, bound, "primary", {
          title: { type: "plain_text", text: "Approve this call?" },
          text: { type: "plain_text", text: (v.summary ?? v.tool).slice(0, 300) },
          confirm: { type: "plain_text", text: "Approve" },
          deny: { type: "plain_text", text: "Cancel" },
        }),
      );
    if (may(policy, v, "approve", "approve") && editableText(v) !== null)
      buttons.push(button("Approve with edits", ACTION_IDS.approve_edit, bound));
    if (may(policy, v, "reject", "reject")) buttons.push(button("Reject", ACTION_IDS.reject, bound, "danger"));
    if (!slackMayTake(policy, v.effect_class, "approve"))
      context.push(`Approving ${v.effect_class ?? "unclassified"} calls is done in Settle, not from Slack.`);
  } else if (unknown && may(policy, v, "record", "record_verification")) {
    buttons.push(button("Found", ACTION_IDS.found, bound, "primary"), button("Not found", ACTION_IDS.not_found, bound));
  }
  if ((awaiting || unknown) && may(policy, v, "escalate", "escalate"))
    buttons.push(button("Escalate", ACTION_IDS.escalate, bound));
  if (!awaiting && !unknown) context.push(decisionLine(v));
  if (note) context.push(escapeMrkdwn(note));
  if (buttons.length > 0) blocks.push({ type: "actions", block_id: "settle_actions", elements: buttons });
  blocks.push({ type: "context", elements: context.map((text) => ({ type: "mrkdwn", text })) });
  const title = awaiting ? "Approval needed" : unknown ? "Outcome unknown" : statusLabels[v.status];
  return { text: `${title}: ${v.summary ?? v.tool} (${v.runtime})`, blocks };
}
