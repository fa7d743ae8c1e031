import type { InvocationView } from "@/lib/invocations/read";
import { parseExactJson } from "@/lib/json/exact";
import type { ApiClientError } from "@/lib/query/fetch";

// Approve with edits in the console (docs/outcome-model.md §4): which arguments an approval is for, the
// editor's text read as the arguments object, and the API's refusals told for a person who was editing.

export type Arguments = Record<string, unknown>;

/** What an approval now approves: the edit pending approval (with its editor), else the call's latest arguments. */
export function approvalArguments(inv: Pick<InvocationView, "arguments_edit" | "attempts">): {
  arguments: Arguments | null;
  editedBy: string | null;
} {
  const edit = inv.arguments_edit;
  if (edit?.state === "pending") return { arguments: edit.arguments, editedBy: edit.by };
  const latest = inv.attempts.findLast((a) => a.arguments != null)?.arguments;
  return { arguments: isObject(latest) ? latest : null, editedBy: null };
}

const isObject = (v: unknown): v is Arguments => typeof v === "object" && v !== null && !Array.isArray(v);

/** Where in the text a parse error's offset is, as people count: line and column from 1. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/** The editor's text as the arguments object (integers of any length kept exact), or what is wrong with it. */
export function readEditedArguments(text: string): { ok: true; value: Arguments } | { ok: false; error: string } {
  if (text.trim() === "") return { ok: false, error: "The arguments are empty: write a JSON object, {} for none." };
  let value: unknown;
  try {
    value = parseExactJson(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const at = /position (\d+)/.exec(message);
    const where = at ? ` (${lineAndColumn(text, Number(at[1]))})` : "";
    return { ok: false, error: `Not valid JSON${where}: ${message.replace(/ in JSON at position.*$/, "")}.` };
  }
  if (!isObject(value)) {
    return { ok: false, error: "The arguments must be a JSON object ({ … }), as the tool was called with." };
  }
  return { ok: true, value };
}

/** A refusal of the approval, said for the person who edited: what happened, and that nothing was approved. */
export function approvalRefusal(error: ApiClientError): { text: string; final: boolean } {
  const now = error.envelope?.safe_details as { status?: string; version?: number } | undefined;
  if (error.code === "VERSION_CONFLICT" && now?.status === "rejected") {
    return {
      text: `Nothing was approved: while you were editing, the approval expired or someone rejected the call (it is now rejected, version ${now.version ?? "?"}). The agent has been told to abandon it.`,
      final: true,
    };
  }
  if (error.code === "VERSION_CONFLICT") {
    return {
      text: `Nothing was approved: someone else acted while you were editing (it is now ${now?.status ?? "different"}, version ${now?.version ?? "?"}) — another approval, an edit or a new record. Close, look at the arguments now awaiting approval, then decide again.`,
      final: true,
    };
  }
  if (error.code === "TRANSITION_REFUSED") return { text: `Nothing was approved: ${error.message}`, final: true };
  if (error.code === "INVALID_REQUEST") return { text: `Settle refused this edit. ${error.message}`, final: false };
  return { text: error.message, final: false };
}
