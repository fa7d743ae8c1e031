"use client";

import type { CSSProperties, ReactNode } from "react";
import { useSyncExternalStore } from "react";
import { Glyph, type GlyphCode } from "./event-glyph";
import { formatClock } from "./format";
import { OVERVIEW_SCALE, type Overview, type OverviewBar, type OverviewLane } from "./overview";
import { ChartFrame, CountBadge, hatch, levels } from "./timeline-chart";

// The task page's chart, drawn in the browser from compact marks
// (overview.ts), so the server's HTML carries lane labels and not a mark per
// event. Like the invocation page's chart it is hidden from assistive
// technology: the story below says the same in words.

const pct = (n: number) => `${((n / OVERVIEW_SCALE) * 100).toFixed(3)}%`;
const span = (a: number, b: number): CSSProperties => ({
  left: pct(a),
  width: pct(Math.max(b - a, OVERVIEW_SCALE * 0.002)),
});

const glyphName = (code: GlyphCode): string => {
  if (code === "i") return "Intent";
  if (code === "a") return "Operator action";
  if (code === "s") return "Stalled";
  if (code === "c") return "Conflicting evidence";
  return `${code.startsWith("p:") ? "Probe" : "Outcome"}: ${code.slice(2).replace("_", " ")}`;
};

const subscribe = () => () => {};

function Bar({ bar: [kind, from, to, stall] }: { bar: OverviewBar }) {
  if (kind === "r")
    return <div className="absolute top-1/2 border-t-2 border-dashed border-slate-400" style={span(from, to)} />;
  if (kind === "u" || kind === "U")
    return (
      <div
        className={`absolute bottom-0.5 border-t-2 border-dotted ${kind === "U" ? "border-amber-500" : "border-amber-300"}`}
        style={span(from, to)}
      />
    );
  return (
    <>
      <div
        className={`tl-wait ${kind === "W" ? "bg-amber-200" : "bg-slate-300"}`}
        style={span(from, stall >= 0 ? stall : to)}
      />
      {stall >= 0 ? (
        <div
          className="tl-wait bg-orange-100 ring-1 ring-orange-400"
          style={{ ...span(stall, to), ...hatch("rgb(251 146 60)") }}
        />
      ) : null}
    </>
  );
}

function Track({ lane, start }: { lane: OverviewLane; start: number }) {
  return (
    <div className="relative h-10">
      <div className="absolute top-1/2 h-px bg-slate-200" style={span(lane.line[0], lane.line[1])} />
      {lane.bars.map((b, i) => (
        <Bar key={i} bar={b} />
      ))}
      {lane.marks.map(([px, level, code, count, after, attempt], i) => (
        <span
          key={i}
          title={`${formatClock(new Date(start + after).toISOString())} ${glyphName(code)}${attempt ? `, attempt ${attempt}` : ""}${count > 1 ? ` (the most telling of ${count} events here)` : ""}`}
          className="tl-mark"
          style={{ left: pct(px), top: levels[level] }}
        >
          <Glyph code={code} small />
          <CountBadge count={count} />
        </span>
      ))}
    </div>
  );
}

export function OverviewChart({
  overview,
  laneLabel,
}: {
  overview: Overview;
  laneLabel: (lane: OverviewLane) => ReactNode;
}) {
  // The marks are drawn once the page is in the browser: the server's HTML stays the size of its lane labels.
  const drawn = useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
  const start = Date.parse(overview.start);
  const at = (px: number) => px / OVERVIEW_SCALE;
  return (
    <ChartFrame
      ticks={overview.ticks.map(([px, label]) => ({ at: at(px), label }))}
      breaks={overview.breaks.map(([from, to, label]) => ({ from: at(from), to: at(to), label }))}
      now={overview.now !== null ? at(overview.now) : null}
      lanes={overview.lanes.map((lane) => ({
        key: lane.invocation_id,
        label: laneLabel(lane),
        track: drawn ? <Track lane={lane} start={start} /> : null,
      }))}
    />
  );
}
