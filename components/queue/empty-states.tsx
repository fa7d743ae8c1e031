import Link from "next/link";
import { Button } from "../ui/button";

// What an empty queue means, and what to do next: three different things.

const code = "rounded bg-slate-100 px-1 font-mono text-xs";

export function NothingReported({ curl, isAdmin }: { curl: string; isAdmin: boolean }) {
  return (
    <div className="space-y-3 px-4 py-8 text-sm text-slate-700" data-testid="empty-nothing-reported">
      <h2 className="text-base font-semibold text-slate-900">Nothing has been reported yet.</h2>
      <p className="max-w-3xl">
        Agent runtimes send Settle one record per tool-call attempt. Settle reads each outcome and puts here every one
        whose side effect may or may not have happened, so that a person decides — it is never guessed, and never
        retried blindly.
      </p>
      <ol className="max-w-3xl list-decimal space-y-2 pl-5">
        <li>
          Give the runtime an ingest key: <code className={code}>npm run -s settle -- keys create &lt;runtime&gt;</code>
          {isAdmin ? (
            <>
              , or under{" "}
              <Link href="/admin/keys" className="font-medium underline">
                Admin → Runtime keys
              </Link>
            </>
          ) : (
            <> (or ask an admin: Admin → Runtime keys)</>
          )}
          . On a new embedded database Settle already printed one, named <code className={code}>local</code>, when it
          started.
        </li>
        <li>Send a first envelope with it — this one is an unknown outcome, so it shows up here:</li>
      </ol>
      <pre className="max-w-full overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100">{curl}</pre>
      <p>This page updates by itself.</p>
    </div>
  );
}

export function QueueClear() {
  return (
    <div className="space-y-2 px-4 py-10 text-center text-sm text-slate-700" data-testid="empty-queue-clear">
      <h2 className="text-base font-semibold text-slate-900">
        Nothing needs a person: every reported outcome is settled.
      </h2>
      <p>
        Invocations land here when their outcome is unknown, they stall, they partly applied, they wait for approval or
        verification, or they were escalated.
      </p>
      <p>
        <Link href="/?status=all" className="font-medium underline">
          View all invocations
        </Link>
      </p>
    </div>
  );
}

export function NoMatch({ onClear }: { onClear: () => void }) {
  return (
    <div className="space-y-3 px-4 py-10 text-center text-sm text-slate-700" data-testid="empty-no-match">
      <h2 className="text-base font-semibold text-slate-900">No invocation matches these filters.</h2>
      <p>Search matches part of a task id, invocation id or idempotency key, as written (ids are case-sensitive).</p>
      <Button onClick={onClear}>Clear filters</Button>
    </div>
  );
}
