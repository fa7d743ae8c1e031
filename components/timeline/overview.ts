import type { Timeline } from "@/lib/invocations/timeline-builder";
import { axisOf } from "./axis";
import { glyphOf, type GlyphCode } from "./event-glyph";
import { binsOf, levels, stack, ticksOf } from "./timeline-chart";
import { formatClock, formatDuration, spansDays } from "./format";

// The task page's chart as compact data: per lane, its marks (position,
// level, glyph, how many events the mark stands for, when, which attempt) and
// its waits (kind and extent), positions in 1/100,000 of the width. The
// server computes it from the timeline; the client draws it. A task's page
// carries this instead of its attempts.

const SCALE = 100_000;
const unit = (fraction: number) => Math.round(fraction * SCALE);

/** [x, level, glyph, count, ms after the start, attempt (0: none)] */
export type OverviewMark = [number, number, GlyphCode, number, number, number];
/** w: waited for the outcome, W: still waiting, r: the pause before a retry, u / U: unsettled (U: still); [kind, from, to, stall (-1: none)] */
export type OverviewBar = ["w" | "W" | "r" | "u" | "U", number, number, number];
export type OverviewLane = {
  invocation_id: string;
  tool: string;
  status: Timeline["lanes"][number]["invocation"]["status"];
  runtime: string;
  line: [number, number];
  marks: OverviewMark[];
  bars: OverviewBar[];
};
export type Overview = {
  start: string;
  ticks: Array<[number, string]>;
  breaks: Array<[number, number, string]>;
  now: number | null;
  lanes: OverviewLane[];
};

export { SCALE as OVERVIEW_SCALE };

export function overviewOf(timeline: Timeline): Overview {
  const { x, breaks } = axisOf(timeline);
  const withDate = spansDays(timeline.start, timeline.end);
  const start = Date.parse(timeline.start);
  const open = timeline.events.some((e) => e.kind === "gap" && e.open);
  return {
    start: timeline.start,
    ticks: ticksOf(timeline, x).map((at) => {
      const px = x(at);
      return [unit(px), formatClock(at, withDate && (px === 0 || px === 1))];
    }),
    breaks: breaks.map((b) => [unit(b.from), unit(b.to), `≈ ${formatDuration(b.ms)}`]),
    now: open ? unit(x(timeline.now)) : null,
    lanes: timeline.lanes.map((lane) => ({
      invocation_id: lane.invocation.invocation_id,
      tool: lane.invocation.tool,
      status: lane.invocation.status,
      runtime: lane.invocation.runtime,
      line: [unit(x(lane.start)), unit(x(lane.end))],
      marks: stack(binsOf(lane.events, x)).map(({ e, px, top, count }) => {
        const attempt = e.kind === "gap" || e.kind === "action" ? 0 : (e.attempt ?? 0);
        return [
          unit(px),
          levels.indexOf(top),
          glyphOf(e as Exclude<typeof e, { kind: "gap" }>),
          count,
          Date.parse(e.at) - start,
          attempt,
        ];
      }),
      bars: lane.events.flatMap((e): OverviewBar[] => {
        // A wait too short to see is not drawn.
        if (e.kind !== "gap" || x(e.until) - x(e.at) < 0.002) return [];
        const kind = e.gap === "before_retry" ? "r" : e.gap === "unsettled" ? (e.open ? "U" : "u") : e.open ? "W" : "w";
        const stall = e.stall_at && Date.parse(e.stall_at) < Date.parse(e.until) ? unit(x(e.stall_at)) : -1;
        return [[kind, unit(x(e.at)), unit(x(e.until)), stall]];
      }),
    })),
  };
}
