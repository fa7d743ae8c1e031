import type { InvocationView } from "../invocations/read";
import { parseExactJson } from "../json/exact";
import { headline, readBound, type Bound } from "./blocks";
import { EDIT_MAX_CHARS as SLACK_INPUT_MAX } from "./editable";

// The modals a button opens, pure: Found / Not found ask for the evidence note (required); Approve with edits
// holds the arguments as JSON to edit and an optional note; Reject and Escalate an optional message to the
// agent. Each carries in private_metadata what its button was bound to (the invocation, version, digest
// shown), what it does, and the click's response_url, so its submission is taken like the click it stands for.

export const RECORD_CALLBACK = "settle_record";
export const EDIT_CALLBACK = "settle_approve_edit";
export const REPLY_CALLBACK = "settle_reply";

export type ModalAction = "found" | "not_found" | "approve" | "reject" | "escalate";
export type ModalMetadata = { b: Bound; a: ModalAction; u: string | null };

const CALLBACK_ACTIONS: Record<string, readonly ModalAction[]> = {
  [RECORD_CALLBACK]: ["found", "not_found"],
  [EDIT_CALLBACK]: ["approve"],
  [REPLY_CALLBACK]: ["reject", "escalate"],
};

/** A submission's metadata, when it is Settle's and fits the modal it came from; else null. */
export function readModalMetadata(callbackId: string | undefined, text: string | undefined): ModalMetadata | null {
  const actions = callbackId ? CALLBACK_ACTIONS[callbackId] : undefined;
  if (!actions || typeof text !== "string") return null;
  try {
    const m = JSON.parse(text) as Partial<ModalMetadata>;
    const bound = readBound(JSON.stringify(m?.b));
    if (!bound || !actions.includes(m.a as ModalAction)) return null;
    return { b: bound, a: m.a as ModalAction, u: typeof m.u === "string" ? m.u : null };
  } catch {
    return null;
  }
}

const plain = (text: string) => ({ type: "plain_text" as const, text });

function textInput(blockId: string, label: string, hint: string, options: Record<string, unknown> = {}) {
  return {
    type: "input",
    block_id: blockId,
    label: plain(label),
    hint: plain(hint),
    // Slack refuses a plain_text_input whose max_length is over 3000 (views.open answers invalid_arguments).
    element: { type: "plain_text_input", action_id: blockId, multiline: true, max_length: SLACK_INPUT_MAX, ...options },
  };
}

/** The modal Found / Not found opens: the evidence note is required. */
export function recordModal(v: InvocationView, result: "found" | "absent", metadata: string): Record<string, unknown> {
  return {
    type: "modal",
    callback_id: RECORD_CALLBACK,
    private_metadata: metadata,
    title: plain(result === "found" ? "Found" : "Not found"),
    submit: plain("Record"),
    close: plain("Cancel"),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: headline(v) } },
      textInput(
        "note",
        "Evidence note",
        result === "found"
          ? "Where you saw that it happened (an id, a dashboard). Settles the call as committed."
          : "Where you checked that it did not happen. Settles the call as not committed.",
      ),
    ],
  };
}

/** The modal Approve with edits opens: the arguments as JSON (redacted), and an optional note. */
export function editModal(v: InvocationView, argumentsText: string, metadata: string): Record<string, unknown> {
  return {
    type: "modal",
    callback_id: EDIT_CALLBACK,
    private_metadata: metadata,
    title: plain("Approve with edits"),
    submit: plain("Approve"),
    close: plain("Cancel"),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: headline(v) } },
      textInput(
        "arguments",
        "Arguments (JSON)",
        "The call runs with exactly these. Secrets show as [redacted]: an edit that keeps one is refused, because Settle never stored it.",
        { initial_value: argumentsText },
      ),
      { ...textInput("note", "Note", "Why you changed them (kept in the audit trail)."), optional: true },
    ],
  };
}

/** The modal Reject / Escalate opens: an optional message the decision API hands to the agent. */
export function replyModal(
  v: InvocationView,
  action: "reject" | "escalate",
  metadata: string,
): Record<string, unknown> {
  return {
    type: "modal",
    callback_id: REPLY_CALLBACK,
    private_metadata: metadata,
    title: plain(action === "reject" ? "Reject" : "Escalate"),
    submit: plain(action === "reject" ? "Reject" : "Escalate"),
    close: plain("Cancel"),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: headline(v) } },
      {
        ...textInput(
          "reply",
          "Message to the agent",
          action === "reject"
            ? "Optional. The agent reads it as the tool's result, e.g. “Refund at most 50 EUR; ask the customer”."
            : "Optional. The agent reads it while a person takes over.",
        ),
        optional: true,
      },
    ],
  };
}

/** The modal's text as the arguments object (integers of any length kept exact), or what is wrong with it. */
export function readArgumentsText(
  text: string | null | undefined,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (!text || text.trim() === "")
    return { ok: false, error: "The arguments are empty: write a JSON object, {} for none." };
  let value: unknown;
  try {
    value = parseExactJson(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `Not valid JSON: ${message}. Nothing was approved.` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { ok: false, error: "The arguments must be a JSON object ({ … }), as the tool was called with." };
  return { ok: true, value: value as Record<string, unknown> };
}
