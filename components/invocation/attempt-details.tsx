import { Json } from "./json";
import type { ReactNode } from "react";
import type { TimelineAttempt } from "@/lib/invocations/timeline-builder";
import { CommitStateLabel } from "@/components/status-badge";
import { formatClock, formatDateTime, formatDuration } from "@/components/timeline/format";
import { attemptAnchor } from "@/lib/invocations/links";
import { DataTable, type Column } from "@/components/ui/data-table";
import { SpanFacts, spanFactsOf } from "./span-facts";

// One ingested record as Settle read it: the normalized fields, the per-item
// results, and the envelope exactly as received (secrets redacted), with the
// dialect it was read in. Everything here is agent or upstream text, shown as
// text.

const phaseWords = {
  intent: "intent (written before dispatch)",
  outcome: "outcome",
  probe: "probe (did an earlier attempt land?)",
} as const;

function Field({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs text-slate-500">{term}</dt>
      <dd className="break-words font-mono text-xs text-slate-900">
        {children ?? <span className="font-sans text-slate-400">—</span>}
      </dd>
    </div>
  );
}

const appliedLook = {
  yes: { label: "applied", glyph: "✓", tone: "text-emerald-800" },
  no: { label: "not applied", glyph: "✕", tone: "text-slate-700" },
  unknown: { label: "unknown", glyph: "?", tone: "font-semibold text-amber-800" },
} as const;

const itemColumns: Array<Column<TimelineAttempt["items"][number]>> = [
  { header: "Item", className: "break-all font-mono", cell: (item) => item.item_id },
  {
    header: "Applied",
    className: "nowrap",
    cell: (item) => (
      <span className={appliedLook[item.applied].tone}>
        <span aria-hidden="true">{appliedLook[item.applied].glyph} </span>
        {appliedLook[item.applied].label}
      </span>
    ),
  },
  { header: "Reason", className: "whitespace-pre-wrap break-words text-slate-700", cell: (item) => item.reason ?? "" },
];

export function ItemResults({ items }: { items: TimelineAttempt["items"] }) {
  const count = (applied: keyof typeof appliedLook) => items.filter((i) => i.applied === applied).length;
  return (
    <div className="space-y-2">
      <p className="flex flex-wrap gap-x-4 text-sm" data-testid="item-counts">
        <span className="font-medium">Per-item results:</span>
        {(["yes", "no", "unknown"] as const).map((k) => (
          <span key={k} className={appliedLook[k].tone}>
            <span aria-hidden="true">{appliedLook[k].glyph} </span>
            {appliedLook[k].label} <span className="tabular-nums font-semibold">{count(k)}</span>
          </span>
        ))}
      </p>
      <DataTable
        caption="Per-item results"
        columns={itemColumns}
        rows={items}
        row={{ key: (item, i) => `${item.item_id}-${i}` }}
        size="compact"
        scroll
      />
    </div>
  );
}

export function AttemptDetails({
  attempt: a,
  index,
  anchor = attemptAnchor(index),
  runtime,
  taskId,
}: {
  attempt: TimelineAttempt;
  index: number;
  anchor?: string;
  runtime?: string;
  taskId?: string;
}) {
  const span = spanFactsOf(a.envelope);
  const lateMs = Date.parse(a.received_at) - Date.parse(a.at);
  const dialect = a.wrapper_dialect ? `${a.dialect} (inside ${a.wrapper_dialect})` : a.dialect;
  const headingId = `${anchor}-heading`;
  return (
    <section
      id={anchor}
      aria-labelledby={headingId}
      className="scroll-mt-24 rounded-lg border border-slate-200 bg-white p-4 target:ring-2 target:ring-indigo-400"
    >
      <h3 id={headingId} className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm font-semibold">
        <span>
          Attempt {a.attempt ?? "(unnumbered)"}: {phaseWords[a.phase]}
        </span>
        <time dateTime={a.at} title={formatDateTime(a.at)} className="font-normal tabular-nums text-slate-600">
          {formatClock(a.at, true)} UTC
        </time>
        {a.phase !== "intent" ? <CommitStateLabel state={a.commit_state} /> : null}
        <span className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs font-normal text-slate-700">
          dialect: {dialect}
        </span>
      </h3>
      {a.phase !== "intent" ? (
        <dl className="mt-3 grid grid-cols-2 gap-x-6 gap-y-2 sm:grid-cols-4 lg:grid-cols-6">
          <Field term="commit_state">{a.commit_state}</Field>
          <Field term="outcome">{a.outcome}</Field>
          <Field term="next_action">{a.next_action}</Field>
          <Field term="code">{a.code}</Field>
          <Field term="category">{a.category}</Field>
          <Field term="dispatch_stage">{a.dispatch_stage}</Field>
          <Field term="retry.directive">{a.retry.directive}</Field>
          <Field term="retry.not_before">{a.retry.not_before ? formatDateTime(a.retry.not_before) : null}</Field>
          <Field term="retry.max_attempts_remaining">{a.retry.max_attempts_remaining ?? null}</Field>
          <Field term="probe_result">{a.probe_result}</Field>
          <Field term="event_id">{a.event_id}</Field>
          <Field term="attempt_id">{a.attempt_id}</Field>
        </dl>
      ) : (
        <dl className="mt-3 grid grid-cols-2 gap-x-6 gap-y-2 sm:grid-cols-4">
          <Field term="event_id">{a.event_id}</Field>
          <Field term="attempt_id">{a.attempt_id}</Field>
        </dl>
      )}
      <p className="mt-2 text-xs text-slate-500">
        Received <time dateTime={a.received_at}>{formatDateTime(a.received_at)}</time>
        {lateMs >= 60_000 ? (
          <span className="font-medium text-slate-700">
            {" "}
            — {formatDuration(lateMs)} after it happened (delivered late)
          </span>
        ) : null}
      </p>
      {span ? <SpanFacts facts={span} runtime={runtime} taskId={taskId} /> : null}
      {a.agent_message || a.user_message ? (
        <div className="mt-3 grid gap-3 md:grid-cols-2">
          {a.agent_message ? (
            <div>
              <p className="text-xs font-medium text-slate-500">agent_message (for the agent)</p>
              <p className="mt-0.5 whitespace-pre-wrap break-words text-sm text-slate-800">{a.agent_message}</p>
            </div>
          ) : null}
          {a.user_message ? (
            <div>
              <p className="text-xs font-medium text-slate-500">user_message (safe to show people)</p>
              <p className="mt-0.5 whitespace-pre-wrap break-words text-sm text-slate-800">{a.user_message}</p>
            </div>
          ) : null}
        </div>
      ) : null}
      {a.items.length > 0 ? (
        <div className="mt-3">
          <ItemResults items={a.items} />
        </div>
      ) : null}
      {a.ignored.length > 0 ? (
        <div
          className="mt-3 rounded-md border border-amber-200 bg-amber-50 p-2 text-xs text-amber-900"
          data-testid="ignored-hints"
        >
          <p className="font-medium">
            Hints in the envelope Settle left out of this reading (the envelope below keeps them):
          </p>
          <ul className="mt-1 list-disc pl-5">
            {a.ignored.map((h) => (
              <li key={h.field}>
                <span className="font-mono">{h.field}</span>: {h.reason}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {Object.keys(a.safe_details).length > 0 ? (
        <details className="mt-3">
          <summary className="cursor-pointer text-sm font-medium text-slate-800">safe_details</summary>
          <div className="mt-2">
            <Json value={a.safe_details} />
          </div>
        </details>
      ) : null}
      {a.arguments != null ? (
        <details className="mt-3">
          <summary className="cursor-pointer text-sm font-medium text-slate-800">
            Arguments{" "}
            <span className="font-normal text-slate-500">
              (secrets redacted; digest <span className="break-all font-mono">{a.args_digest}</span>)
            </span>
          </summary>
          <div className="mt-2">
            <Json value={a.arguments} />
          </div>
        </details>
      ) : null}
      {a.phase === "intent" && a.envelope == null ? (
        <p className="mt-3 text-xs text-slate-500">An intent carries no envelope: it is written before the call.</p>
      ) : (
        <details className="mt-3">
          <summary className="cursor-pointer text-sm font-medium text-slate-800">
            Envelope as received{" "}
            <span className="font-normal text-slate-500">(secrets redacted; read as {dialect})</span>
          </summary>
          <div className="mt-2">
            <Json value={a.envelope ?? null} />
          </div>
        </details>
      )}
    </section>
  );
}
