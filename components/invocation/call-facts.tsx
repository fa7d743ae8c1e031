import type { InvocationView } from "@/lib/invocations/read";
import { Json } from "./json";

// What the call was and where to check it, above the decision: the arguments in full (secrets redacted, as
// stored) and the tool's runbook from its catalog entry ("Check in dashboard.example.com" and the steps), so the
// person deciding need not open the raw envelope or hunt in another system.

export function CallFacts({ inv }: { inv: InvocationView }) {
  const args = inv.attempts.findLast((a) => a.arguments != null)?.arguments;
  const runbook = inv.runbook;
  if (args == null && !runbook) return null;
  return (
    <section aria-labelledby="call-facts-heading" className="grid gap-4 lg:grid-cols-2">
      <h2 id="call-facts-heading" className="sr-only">
        What the call was and where to check it
      </h2>
      {args != null ? (
        <div className="rounded-lg border border-slate-200 bg-white p-4" data-testid="call-arguments">
          <h3 className="text-sm font-semibold text-slate-900">Arguments</h3>
          <p className="mt-0.5 text-xs text-slate-500">The latest the runtime sent, secrets redacted.</p>
          <div className="mt-2">
            <Json value={args} />
          </div>
        </div>
      ) : null}
      {runbook ? (
        <div className="rounded-lg border border-indigo-200 bg-indigo-50 p-4" data-testid="runbook">
          <h3 className="text-sm font-semibold text-indigo-950">Where to check it</h3>
          {runbook.url ? (
            <p className="mt-2">
              <a
                href={runbook.url}
                target="_blank"
                rel="noopener noreferrer nofollow"
                className="inline-flex items-center gap-1 rounded-md bg-white px-3 py-1.5 text-sm font-medium text-indigo-800 ring-1 ring-inset ring-indigo-300 hover:bg-indigo-100"
              >
                Check in {runbook.host}
                <span aria-hidden="true">↗</span>
              </a>
            </p>
          ) : null}
          {runbook.steps ? (
            <p className="mt-2 whitespace-pre-wrap break-words text-sm text-indigo-950">{runbook.steps}</p>
          ) : null}
          <p className="mt-2 text-xs text-indigo-900/80">
            Then record what you saw with <strong>Record verification</strong>.
          </p>
        </div>
      ) : null}
    </section>
  );
}
