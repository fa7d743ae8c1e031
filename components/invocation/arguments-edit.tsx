import type { InvocationView } from "@/lib/invocations/read";
import { diffArguments } from "@/lib/invocations/arguments-diff";
import { formatUtc } from "@/components/audit/time";
import { ChangesDiff } from "@/components/ui/changes-diff";
import { Json } from "./json";

// Approve with edits on the invocation page: the arguments a person changed before approving (pending while
// more approvals are needed, or approved: the runtime is to run the call with them), as a diff against the
// call's own arguments, who edited and when. Shown until the call asks for approval again.

export function ArgumentsEdit({ inv }: { inv: InvocationView }) {
  const edit = inv.arguments_edit;
  if (!edit) return null;
  const own = inv.attempts.findLast((a) => a.arguments != null)?.arguments ?? {};
  const changes = diffArguments(own, edit.arguments);
  const pending = edit.state === "pending";
  return (
    <section
      aria-labelledby="arguments-edit-heading"
      data-testid="arguments-edit"
      data-state={edit.state}
      className={`space-y-3 rounded-lg border p-4 ${pending ? "border-amber-300 bg-amber-50" : "border-emerald-300 bg-emerald-50"}`}
    >
      <div>
        <h2 id="arguments-edit-heading" className="text-sm font-semibold text-slate-900">
          {pending ? "Edited arguments awaiting approval" : "Approved with edited arguments"}
        </h2>
        <p className="mt-0.5 text-sm text-slate-700">
          <span className="font-medium">{edit.by}</span> changed the arguments at {formatUtc(edit.at)}.{" "}
          {pending
            ? `The approvals so far are for these${inv.approvals ? ` (${inv.approvals.count} of ${inv.approvals.quorum})` : ""}; an approval now approves them.`
            : "The runtime is to run the call with these; a run with any others is flagged."}
        </p>
      </div>
      <div className="rounded-md bg-white p-3 ring-1 ring-inset ring-slate-200">
        {changes.length > 0 ? (
          <ChangesDiff
            changes={changes}
            caption="The edit against the call's own arguments"
            testId="arguments-edit-diff"
          />
        ) : (
          <p className="text-sm text-slate-600">
            The same as the call&apos;s own arguments, apart from values Settle leaves out of the comparison.
          </p>
        )}
      </div>
      <details className="text-sm">
        <summary className="cursor-pointer text-xs font-medium text-slate-700">
          All the {pending ? "edited" : "approved"} arguments
        </summary>
        <div className="mt-2">
          <Json value={edit.arguments} />
        </div>
      </details>
    </section>
  );
}
