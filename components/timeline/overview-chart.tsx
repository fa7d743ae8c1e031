"use client";

import type { CSSProperties, ReactNode } from "react";
import { useSyncExternalStore } from "react";
import { Glyph, type GlyphCode } from "./event-glyph";
import { formatClock } from "./format";
import { OVERVIEW_SCALE, type Overview, type OverviewBar, type OverviewLane } from "./overview";
import { hatch, Legend, levels } from "./timeline-chart";

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
          {count > 1 ? (
            <span className="absolute -right-2 -top-1.5 rounded-full bg-slate-800 px-1 text-[9px] font-semibold leading-3 text-white">
              {count}
            </span>
          ) : null}
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
  return (
    <figure className="overflow-x-auto">
      <figcaption className="sr-only">Timeline chart. The same events are listed below, in order, as text.</figcaption>
      <div className="min-w-[40rem]">
        <div className="grid grid-cols-[minmax(10rem,16rem)_1fr] gap-x-4">
          <div className="text-xs text-slate-500">Times in UTC</div>
          <div aria-hidden="true" className="relative mx-3 h-6 text-[11px] tabular-nums text-slate-500">
            {overview.ticks.map(([px, label]) => (
              <span
                key={px}
                className="absolute top-0 whitespace-nowrap"
                style={{
                  left: pct(px),
                  transform: `translateX(${px > 0.9 * OVERVIEW_SCALE ? "-100%" : px < 0.1 * OVERVIEW_SCALE ? "0" : "-50%"})`,
                }}
              >
                {label}
              </span>
            ))}
          </div>
          <div>
            {overview.lanes.map((lane) => (
              <div
                key={lane.invocation_id}
                className="flex h-11 min-w-0 items-center border-t border-slate-100 text-sm"
              >
                {laneLabel(lane)}
              </div>
            ))}
          </div>
          <div aria-hidden="true" className="px-3">
            <div className="relative">
              {overview.breaks.map(([from, to]) => (
                <div
                  key={from}
                  className="absolute inset-y-0 border-x border-dashed border-slate-300 bg-slate-100/70"
                  style={{ left: pct(from), width: pct(to - from) }}
                />
              ))}
              {overview.lanes.map((lane) => (
                <div key={lane.invocation_id} className="h-11 border-t border-slate-100 pt-0.5">
                  {drawn ? <Track lane={lane} start={start} /> : null}
                </div>
              ))}
              {overview.now !== null ? (
                <div className="absolute inset-y-0 w-px bg-rose-400" style={{ left: pct(overview.now) }} />
              ) : null}
            </div>
          </div>
          <div />
          <div aria-hidden="true" className="relative mx-3 h-5 text-[11px] text-slate-500">
            {overview.breaks.map(([from, to, label]) => (
              <span
                key={from}
                className="absolute top-0 -translate-x-1/2 whitespace-nowrap"
                style={{ left: pct((from + to) / 2) }}
              >
                {label}
              </span>
            ))}
            {overview.now !== null ? (
              <span className="absolute top-0 -translate-x-full pr-1 text-rose-600" style={{ left: pct(overview.now) }}>
                now
              </span>
            ) : null}
          </div>
        </div>
        <Legend />
      </div>
    </figure>
  );
}
