import type { CommitState } from "@/lib/outcome/vocabulary";
import type { InvocationStatus } from "@/lib/outcome/status";
import { statusLabels } from "@/lib/outcome/labels";

// Status and commit state always carry a word and a glyph, never colour alone.

const statusLook: Record<InvocationStatus, { glyph: string; tone: string }> = {
  outcome_unknown: { glyph: "?", tone: "bg-amber-100 text-amber-900 ring-amber-300" },
  stalled: { glyph: "◷", tone: "bg-orange-100 text-orange-900 ring-orange-300" },
  partially_applied: { glyph: "◐", tone: "bg-orange-100 text-orange-900 ring-orange-300" },
  awaiting_approval: { glyph: "⚐", tone: "bg-violet-100 text-violet-900 ring-violet-300" },
  verifying: { glyph: "⟳", tone: "bg-sky-100 text-sky-900 ring-sky-300" },
  escalated: { glyph: "▲", tone: "bg-rose-100 text-rose-900 ring-rose-300" },
  needs_input: { glyph: "✎", tone: "bg-slate-100 text-slate-800 ring-slate-300" },
  retry_scheduled: { glyph: "↻", tone: "bg-slate-100 text-slate-800 ring-slate-300" },
  pending: { glyph: "…", tone: "bg-slate-100 text-slate-700 ring-slate-300" },
  succeeded: { glyph: "✓", tone: "bg-emerald-100 text-emerald-900 ring-emerald-300" },
  failed: { glyph: "✕", tone: "bg-slate-200 text-slate-800 ring-slate-400" },
  approved: { glyph: "✓", tone: "bg-emerald-100 text-emerald-900 ring-emerald-300" },
  rejected: { glyph: "✕", tone: "bg-slate-200 text-slate-800 ring-slate-400" },
  reconciled: { glyph: "≡", tone: "bg-teal-100 text-teal-900 ring-teal-300" },
};

const commitLook: Record<CommitState, { label: string; glyph: string; tone: string }> = {
  committed: { label: "committed", glyph: "✓", tone: "text-emerald-800" },
  not_committed: { label: "not committed", glyph: "✕", tone: "text-slate-700" },
  unknown: { label: "unknown", glyph: "?", tone: "text-amber-800 font-semibold" },
  partial: { label: "partial", glyph: "◐", tone: "text-orange-800 font-semibold" },
};

export function StatusBadge({ status }: { status: InvocationStatus }) {
  const look = statusLook[status];
  return (
    <span
      className={`inline-flex items-center gap-1.5 whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${look.tone}`}
    >
      <span aria-hidden="true">{look.glyph}</span>
      {statusLabels[status]}
    </span>
  );
}

export function CommitStateLabel({ state }: { state: CommitState }) {
  const look = commitLook[state];
  return (
    <span
      data-testid="commit-state"
      className={`inline-flex items-center gap-1 whitespace-nowrap text-xs ${look.tone}`}
    >
      <span aria-hidden="true">{look.glyph}</span>
      {look.label}
    </span>
  );
}

/** A status change as the audit trail tells it: from → to, or the one status and "unchanged". */
export function StatusChange({ from, to }: { from: InvocationStatus; to: InvocationStatus }) {
  return (
    <span className="inline-flex flex-wrap items-center gap-1.5">
      <StatusBadge status={from} />{" "}
      {from === to ? (
        <span className="text-xs text-slate-500">unchanged</span>
      ) : (
        <>
          <span aria-label="to" className="text-slate-500">
            →
          </span>{" "}
          <StatusBadge status={to} />
        </>
      )}
    </span>
  );
}
