import type { InvocationView } from "../invocations/read";
import { stringifyExactJson } from "../json/exact";
import { redact } from "../redact/redact";

// Which arguments a Slack message shows and the "Approve with edits" modal offers, pure: an edit's (pending
// more approvals, or approved), else the call's latest — as Settle stored them, redacted.

/** Slack's limit on a plain_text_input's text: arguments longer than this are edited in the console. */
export const EDIT_MAX_CHARS = 3000;

type Shown = Pick<InvocationView, "arguments_edit" | "attempts">;

/** The arguments shown: an edit's (pending, or approved), else the call's latest. */
export function shownArguments(v: Shown): unknown {
  if (v.arguments_edit) return v.arguments_edit.arguments;
  for (let i = v.attempts.length - 1; i >= 0; i -= 1)
    if (v.attempts[i]!.arguments != null) return v.attempts[i]!.arguments;
  return null;
}

/** The arguments as the modal's text (pretty JSON, redacted), or null when they are no object or too long. */
export function editableText(v: Shown): string | null {
  const args = shownArguments(v);
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  const text = stringifyExactJson(redact(args), 2);
  return text.length <= EDIT_MAX_CHARS ? text : null;
}
