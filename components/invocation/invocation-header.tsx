import Link from "next/link";
import type { ReactNode } from "react";
import type { InvocationView } from "@/lib/invocations/read";
import { CommitStateLabel, StatusBadge } from "@/components/status-badge";
import { SlaSentence } from "@/components/sla-note";
import { formatAgo, formatClock, formatDateTime } from "@/components/timeline/format";
import { nextActionLabel } from "@/components/queue/filters";
import { taskHref } from "@/lib/invocations/links";
import { InvocationId } from "../ui/invocation-id";

// The facts an operator decides on, at the top of the invocation page.

function Fact({ term, children, mono = false }: { term: string; children: ReactNode; mono?: boolean }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{term}</dt>
      <dd className={`mt-0.5 break-words text-sm text-slate-900 ${mono ? "font-mono" : ""}`}>{children}</dd>
    </div>
  );
}

/** The runtime's latest message for people, said to be from the record it came with: it may be older than the status. */
function LatestMessage({ inv }: { inv: InvocationView }) {
  if (!inv.user_message) return null;
  const from = inv.attempts.findLast((a) => a.user_message === inv.user_message);
  return (
    <p className="mt-2 max-w-3xl whitespace-pre-wrap break-words text-sm text-slate-700">
      <span className="text-slate-500">
        Latest message for people
        {from ? ` (attempt ${from.attempt ?? 1} ${from.phase}, ${formatClock(from.at)} UTC)` : ""}:{" "}
      </span>
      “{inv.user_message}”
    </p>
  );
}

/** What the policy of its effect class means now: approvals so far against the quorum, overdue, when Settle acts on its own. */
function PolicyLine({ inv, now }: { inv: InvocationView; now: string }) {
  if (!inv.sla && !inv.approvals) return null;
  const a = inv.approvals;
  return (
    <p data-testid="policy-line" className="mt-2 flex flex-wrap items-center gap-x-4 gap-y-1 text-sm text-slate-700">
      {a ? (
        <span data-testid="approvals">
          <span aria-hidden="true">⚐ </span>
          <strong>
            {a.count} of {a.quorum}
          </strong>{" "}
          approval{a.quorum === 1 ? "" : "s"}
          {a.by.length > 0 ? (
            <span className="text-slate-500">
              {" "}
              — approved by {a.by.join(", ")}; the next must come from someone else
            </span>
          ) : null}
        </span>
      ) : null}
      {inv.sla ? <SlaSentence sla={inv.sla} now={now} /> : null}
    </p>
  );
}

export function InvocationHeader({ inv, now }: { inv: InvocationView; now: string }) {
  return (
    <header className="space-y-4">
      <div>
        <p className="text-xs font-medium uppercase tracking-wide text-slate-500">Invocation</p>
        <h1 className="mt-1 flex flex-wrap items-center gap-x-3 gap-y-2 text-xl font-semibold">
          <span className="break-all font-mono">{inv.tool}</span>
          <span className="rounded-md bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-700 ring-1 ring-inset ring-slate-300">
            {inv.effect_class ?? "unclassified write"}
          </span>
          <StatusBadge status={inv.status} />
          {inv.ran_with_other_arguments ? (
            <span
              data-testid="args-mismatch"
              className="rounded-full bg-rose-100 px-2 py-0.5 text-xs font-semibold text-rose-900 ring-1 ring-inset ring-rose-300"
            >
              <span aria-hidden="true">⚠ </span>Ran with arguments other than those approved
            </span>
          ) : null}
          {inv.conflict ? (
            <span className="rounded-full bg-rose-100 px-2 py-0.5 text-xs font-semibold text-rose-900 ring-1 ring-inset ring-rose-300">
              <span aria-hidden="true">⚠ </span>Conflicting evidence
            </span>
          ) : null}
        </h1>
        {inv.summary ? (
          <p data-testid="call-summary" className="mt-1 break-words text-base text-slate-800">
            {inv.summary}
          </p>
        ) : null}
        <PolicyLine inv={inv} now={now} />
        <LatestMessage inv={inv} />
      </div>
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 sm:grid-cols-3 lg:grid-cols-6">
        <Fact term="Commit state">
          <CommitStateLabel state={inv.commit_state} />
        </Fact>
        <Fact term="Next action">
          <span title={inv.next_action}>{nextActionLabel(inv.next_action)}</span>
        </Fact>
        <Fact term="Assignee">{inv.assignee ?? <span className="text-slate-500">nobody</span>}</Fact>
        <Fact term="Attempts">{inv.attempt_count}</Fact>
        <Fact term="Status since">
          <time dateTime={inv.status_since} title={formatDateTime(inv.status_since)}>
            {formatAgo(inv.status_since, now)}
          </time>
        </Fact>
        <Fact term="Version" mono>
          {inv.version}
        </Fact>
        <Fact term="Task" mono>
          <Link
            href={taskHref(inv.task_id, inv.runtime)}
            className="break-all text-indigo-700 underline-offset-2 hover:underline"
          >
            {inv.task_id}
          </Link>
        </Fact>
        <Fact term="Invocation id" mono>
          <InvocationId id={inv.invocation_id} copy />
        </Fact>
        <Fact term="Runtime" mono>
          {inv.runtime}
        </Fact>
        <Fact term="Idempotency key" mono>
          {inv.idempotency_key ?? <span className="font-sans text-slate-500">none sent</span>}
        </Fact>
        <Fact term="First seen">
          <time dateTime={inv.first_seen_at}>{formatDateTime(inv.first_seen_at)}</time>
        </Fact>
        <Fact term="Last attempt">
          <time dateTime={inv.last_attempt_at}>{formatDateTime(inv.last_attempt_at)}</time>
        </Fact>
      </dl>
    </header>
  );
}
