import { CircleDashed, Pause, Search, TriangleAlert, UserRound } from "lucide-react";
import type { CommitState } from "@/lib/ingest/vocabulary";
import type { TimelineEvent } from "@/lib/domain/timeline";

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
export const commitGlyph: Record<CommitState, string> = { committed: "✓", not_committed: "✕", unknown: "?", partial: "◐" };

const size = { sm: "h-4 w-4 text-[10px]", md: "h-6 w-6 text-xs" } as const;
const iconSize = { sm: 10, md: 14 } as const;

export function EventGlyph({ event, small = false }: { event: TimelineEvent; small?: boolean }) {
  const s = small ? "sm" : "md";
  const box = `inline-flex shrink-0 items-center justify-center ring-1 ${size[s]}`;
  if (event.kind === "record") {
    const commit = event.record.commit_state;
    // Records are most of a long timeline's markers: on the chart they are
    // plain shapes with a character and short class names (app/globals.css,
    // .tl-*), not SVG icons, to keep the page light.
    if (small) {
      if (event.phase === "intent") return <span aria-hidden="true" className="tl-g tl-intent" />;
      return <span aria-hidden="true" className={`tl-g ${event.phase === "probe" ? "tl-probe" : "tl-out"} tl-${commit}`}>{commitGlyph[commit]}</span>;
    }
    if (event.phase === "intent") {
      return <span aria-hidden="true" className={`${box} rounded-full bg-white text-slate-600 ring-slate-400`}><CircleDashed size={iconSize[s]} /></span>;
    }
    if (event.phase === "probe") {
      return <span aria-hidden="true" className={`${box} rounded-sm font-bold ${commitTone[commit]}`}><Search size={iconSize[s]} strokeWidth={3} /></span>;
    }
    return <span aria-hidden="true" className={`${box} rounded-full font-bold ${commitTone[commit]}`}>{commitGlyph[commit]}</span>;
  }
  if (event.kind === "action") {
    return <span aria-hidden="true" className={`${box} rounded-sm bg-indigo-600 text-white ring-indigo-700`}><UserRound size={iconSize[s]} /></span>;
  }
  if (event.kind === "marker") {
    return event.marker === "stalled" ? (
      <span aria-hidden="true" className={`${box} rounded-full bg-orange-100 text-orange-800 ring-orange-400`}><Pause size={iconSize[s]} /></span>
    ) : (
      <span aria-hidden="true" className={`${box} rounded-full bg-rose-100 text-rose-800 ring-rose-400`}><TriangleAlert size={iconSize[s]} /></span>
    );
  }
  return null;
}
