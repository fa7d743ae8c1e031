import { CircleDashed, Pause, Search, TriangleAlert, UserRound } from "lucide-react";
import type { CommitState } from "@/lib/outcome/vocabulary";
import type { TimelineEvent } from "@/lib/invocations/timeline-builder";

// One look per kind of event, the same on the chart and in the story: the
// shape says what happened (intent, outcome, probe, a person, a marker), the
// glyph and colour what it said about the commit state. The story beside it
// always says it in words too.

const commitTone: Record<CommitState, string> = {
  committed: "bg-emerald-600 text-white ring-emerald-700",
  not_committed: "bg-slate-500 text-white ring-slate-600",
  unknown: "bg-amber-400 text-amber-950 ring-amber-600",
  partial: "bg-orange-500 text-white ring-orange-700",
};
export const commitGlyph: Record<CommitState, string> = {
  committed: "✓",
  not_committed: "✕",
  unknown: "?",
  partial: "◐",
};

const size = { sm: "h-4 w-4 text-[10px]", md: "h-6 w-6 text-xs" } as const;
const iconSize = { sm: 10, md: 14 } as const;

/** A glyph in a word: i intent, o:/p: an outcome / probe with its commit state, a action, s stalled, c conflict. */
export type GlyphCode = "i" | `o:${CommitState}` | `p:${CommitState}` | "a" | "s" | "c";

export function glyphOf(event: Exclude<TimelineEvent, { kind: "gap" }>): GlyphCode {
  if (event.kind === "record")
    return event.phase === "intent" ? "i" : `${event.phase === "probe" ? "p" : "o"}:${event.record.commit_state}`;
  if (event.kind === "action") return "a";
  return event.marker === "stalled" ? "s" : "c";
}

export function EventGlyph({ event, small = false }: { event: TimelineEvent; small?: boolean }) {
  return event.kind === "gap" ? null : <Glyph code={glyphOf(event)} small={small} />;
}

export function Glyph({ code, small = false }: { code: GlyphCode; small?: boolean }) {
  const s = small ? "sm" : "md";
  const box = `inline-flex shrink-0 items-center justify-center ring-1 ${size[s]}`;
  if (code === "a") {
    return (
      <span aria-hidden="true" className={`${box} rounded-sm bg-indigo-600 text-white ring-indigo-700`}>
        <UserRound size={iconSize[s]} />
      </span>
    );
  }
  if (code === "s") {
    return (
      <span aria-hidden="true" className={`${box} rounded-full bg-orange-100 text-orange-800 ring-orange-400`}>
        <Pause size={iconSize[s]} />
      </span>
    );
  }
  if (code === "c") {
    return (
      <span aria-hidden="true" className={`${box} rounded-full bg-rose-100 text-rose-800 ring-rose-400`}>
        <TriangleAlert size={iconSize[s]} />
      </span>
    );
  }
  // Records are most of a long timeline's markers: on the chart they are
  // plain shapes with a character and short class names (app/globals.css,
  // .tl-*), not SVG icons, to keep the page light.
  if (code === "i") {
    return small ? (
      <span aria-hidden="true" className="tl-g tl-intent" />
    ) : (
      <span aria-hidden="true" className={`${box} rounded-full bg-white text-slate-600 ring-slate-400`}>
        <CircleDashed size={iconSize[s]} />
      </span>
    );
  }
  const probe = code.startsWith("p:");
  const commit = code.slice(2) as CommitState;
  if (small)
    return (
      <span aria-hidden="true" className={`tl-g ${probe ? "tl-probe" : "tl-out"} tl-${commit}`}>
        {commitGlyph[commit]}
      </span>
    );
  return probe ? (
    <span aria-hidden="true" className={`${box} rounded-sm font-bold ${commitTone[commit]}`}>
      <Search size={iconSize[s]} strokeWidth={3} />
    </span>
  ) : (
    <span aria-hidden="true" className={`${box} rounded-full font-bold ${commitTone[commit]}`}>
      {commitGlyph[commit]}
    </span>
  );
}
