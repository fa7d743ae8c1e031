import Link from "next/link";
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

/** A part of a page under its own heading (`h2`, labelling the part); `aside` stands at the heading's right. */
export function Subsection({
  id,
  title,
  aside,
  children,
}: {
  id: string;
  title: ReactNode;
  aside?: ReactNode;
  children: ReactNode;
}) {
  return (
    <section aria-labelledby={id} className="space-y-2">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h2 id={id} className="text-sm font-semibold">
          {title}
        </h2>
        {aside}
      </div>
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

const ok = "text-emerald-800";
const waiting = "text-amber-800";
const off = "text-slate-600";
const bad = "font-semibold text-rose-700";

/** The states a row of a console list can be in: glyph, colour and word, each named once. */
const states = {
  active: ["●", ok, "Active"],
  enabled: ["●", ok, "Enabled"],
  delivered: ["✓", ok, "Delivered"],
  pending: ["…", waiting, "Pending"],
  expired: ["⌛", waiting, "Expired"],
  failed: ["✕", bad, "Failed"],
  disabled: ["⏸", off, "Disabled"],
  running: ["●", ok, "Running"],
  not_running: ["✕", bad, "Not running"],
  deactivated: ["○", off, "Deactivated"],
  revoked: ["⊘", off, "Revoked"],
  set: ["●", ok, "Set"],
  not_set: ["○", waiting, "Not set"],
} as const;
export type RowState = keyof typeof states;

/** A row's state in words, after a glyph that only sighted readers need; `children` say more (since when). */
export function StateLabel({ state, children }: { state: RowState; children?: ReactNode }) {
  const [glyph, tone, label] = states[state];
  return (
    <span className={`inline-flex items-center gap-1 ${tone}`}>
      <span aria-hidden="true">{glyph}</span>
      {label}
      {children === undefined ? null : <> {children}</>}
    </span>
  );
}

/** Where a page sits: the pages above it, each a link, then this one. */
export function Breadcrumb({
  trail,
  current,
}: {
  trail: Array<{ href: string; label: ReactNode }>;
  current?: ReactNode;
}) {
  return (
    <nav aria-label="Breadcrumb" className="text-sm text-slate-600">
      <ol className="flex flex-wrap items-center gap-1">
        {trail.map((step) => (
          <li key={step.href}>
            <Link href={step.href} className="break-all text-indigo-700 hover:underline">
              {step.label}
            </Link>{" "}
            {current === undefined && step === trail.at(-1) ? null : <span aria-hidden="true">/</span>}
          </li>
        ))}
        {current === undefined ? null : (
          <li aria-current="page" className="break-all">
            {current}
          </li>
        )}
      </ol>
    </nav>
  );
}
