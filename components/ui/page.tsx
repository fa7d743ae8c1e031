import type { ReactNode } from "react";

// The parts every console page is built of: its heading with what the page is for and its main action, the
// line that says what the last change did, an empty state that teaches, and a state with its glyph.

/** A page's own section: its heading (`h1`, labelling the section), its explanation and its main action. */
export function PageSection({
  id,
  title,
  description,
  action,
  notice,
  children,
}: {
  /** The heading's id, which labels the section. */
  id: string;
  title: ReactNode;
  description?: ReactNode;
  action?: ReactNode;
  /** What the last change on this page did (undefined: the page changes nothing). */
  notice?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section aria-labelledby={id} className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h1 id={id} className="text-xl font-semibold">
            {title}
          </h1>
          {description ? <p className="mt-1 max-w-3xl text-sm text-slate-600">{description}</p> : null}
        </div>
        {action}
      </div>
      {notice === undefined ? null : <Notice>{notice}</Notice>}
      {children}
    </section>
  );
}

/** What the last change did, announced politely; empty until there is something to say. */
export function Notice({ children }: { children: ReactNode }) {
  return (
    <p role="status" aria-live="polite" className="text-sm text-emerald-800">
      {children}
    </p>
  );
}

/** Nothing to list yet: what the list is for and how to fill it. */
export function EmptyState({ title, children, testId }: { title?: string; children: ReactNode; testId?: string }) {
  return (
    <div
      data-testid={testId}
      className="space-y-2 rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-700"
    >
      {title ? <h2 className="text-base font-semibold text-slate-900">{title}</h2> : null}
      {children}
    </div>
  );
}

const tones = {
  ok: "text-emerald-800",
  off: "text-slate-600",
  waiting: "text-amber-800",
  failed: "font-semibold text-rose-700",
} as const;

/** A row's state in words, after a glyph that only sighted readers need (●, ⊘, ⌛). */
export function StateLabel({
  glyph,
  tone,
  children,
}: {
  glyph: string;
  tone: keyof typeof tones;
  children: ReactNode;
}) {
  return (
    <span className={`inline-flex items-center gap-1 ${tones[tone]}`}>
      <span aria-hidden="true">{glyph}</span>
      {children}
    </span>
  );
}
