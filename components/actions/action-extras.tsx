import { ChangesDiff, type MemberChange } from "../ui/changes-diff";

// What an action said beyond its note, wherever an action is listed (the invocation's audit trail, the
// timelines, the admin audit page): the arguments an approver changed, and the words sent to the agent.

export type ActionExtrasEntry = { reply?: string | null; edit?: { changes: readonly MemberChange[] } | null };

export function ActionExtras({ entry }: { entry: ActionExtrasEntry }) {
  if (!entry.edit && !entry.reply) return null;
  return (
    <div className="mt-1 space-y-2">
      {entry.edit ? (
        <div data-testid="action-edit" className="rounded-md border border-slate-200 bg-white p-2">
          <p className="mb-1 text-xs font-medium text-slate-600">Changed the arguments before approving:</p>
          <ChangesDiff changes={entry.edit.changes} caption="What the approver changed in the arguments" />
        </div>
      ) : null}
      {entry.reply ? (
        <div data-testid="action-reply" className="rounded-md border-l-4 border-indigo-300 bg-indigo-50 px-2 py-1">
          <p className="text-xs font-medium text-indigo-900">Message to the agent (its tool result):</p>
          <p className="whitespace-pre-wrap break-words text-sm text-slate-900">{entry.reply}</p>
        </div>
      ) : null}
    </div>
  );
}
