import type { CSSProperties, ReactNode } from "react";
import type { GapEvent, Lane, Timeline, TimelineEvent } from "@/lib/invocations/timeline-builder";
import { axisOf } from "./axis";
import { EventGlyph } from "./event-glyph";
import { eventLabel } from "./event-text";
import { formatClock, formatDuration, spansDays } from "./format";

// Lanes on one time axis: a row per invocation, its records, actions and
// markers where they happened, the waits between them as bars (the part past
// the stall window hatched). The story below the chart says the same in
// words and is what keyboard and screen-reader users move through, so the
// drawing itself is hidden from assistive technology.

export const hatch = (colour: string): CSSProperties => ({
  backgroundImage: `repeating-linear-gradient(135deg, ${colour} 0 4px, transparent 4px 8px)`,
});

export const pct = (fraction: number) => `${(fraction * 100).toFixed(3)}%`;

type Props = {
  timeline: Timeline;
  laneLabel: (lane: Lane) => ReactNode;
  /** Where a mark links to (a keyboard skips them: the story says the same); without it, a mark only has its title. */
  hrefFor?: (event: TimelineEvent) => string;
};

function GapBar({ gap, x }: { gap: GapEvent; x: (iso: string) => number }) {
  const left = x(gap.at);
  const right = x(gap.until);
  const stall = gap.stall_at && Date.parse(gap.stall_at) < Date.parse(gap.until) ? x(gap.stall_at) : null;
  const pos = (a: number, b: number): CSSProperties => ({ left: pct(a), width: pct(Math.max(b - a, 0.002)) });
  if (gap.gap === "before_retry") {
    return <div className="absolute top-1/2 border-t-2 border-dashed border-slate-400" style={pos(left, right)} />;
  }
  if (gap.gap === "unsettled") {
    return (
      <div
        className={`absolute bottom-0.5 border-t-2 border-dotted ${gap.open ? "border-amber-500" : "border-amber-300"}`}
        style={pos(left, right)}
      />
    );
  }
  return (
    <>
      <div className={`tl-wait ${gap.open ? "bg-amber-200" : "bg-slate-300"}`} style={pos(left, stall ?? right)} />
      {stall !== null ? (
        <div
          className="tl-wait bg-orange-100 ring-1 ring-orange-400"
          style={{ ...pos(stall, right), ...hatch("rgb(251 146 60)") }}
        />
      ) : null}
    </>
  );
}

/** How many events one mark stands for, at its corner, when it stands for more than one. */
export function CountBadge({ count }: { count: number }) {
  return count > 1 ? (
    <span className="absolute -right-2 -top-1.5 rounded-full bg-slate-800 px-1 text-[9px] font-semibold leading-3 text-white">
      {count}
    </span>
  ) : null;
}

export const levels = ["50%", "18%", "82%"];

// Events closer than a bin (0.4% of the width) cannot be told apart on screen:
// the bin shows its most telling event and says how many it holds. A task
// with a thousand attempts stays a light page; the story lists them all.
const BIN = 0.004;

function severity(e: TimelineEvent): number {
  if (e.kind === "marker") return e.marker === "conflict" ? 9 : 8;
  if (e.kind === "action") return 5;
  if (e.kind !== "record") return 0;
  if (e.phase === "intent") return 1;
  return { unknown: 7, partial: 6, not_committed: 3, committed: 2 }[e.record.commit_state];
}

type Bin = { e: TimelineEvent; px: number; count: number; first: string; last: string };

export function binsOf(events: TimelineEvent[], x: (iso: string) => number): Bin[] {
  const bins = new Map<number, Bin>();
  for (const e of events) {
    if (e.kind === "gap") continue;
    const px = x(e.at);
    const key = Math.round(px / BIN);
    const bin = bins.get(key);
    if (!bin) bins.set(key, { e, px, count: 1, first: e.at, last: e.at });
    else {
      bin.count += 1;
      bin.last = e.at;
      if (severity(e) > severity(bin.e)) Object.assign(bin, { e, px });
    }
  }
  return [...bins.values()].sort((a, b) => a.px - b.px);
}

/** Bins closer than about 1% of the width are stacked, so none hides another. */
export function stack<T extends { px: number }>(points: T[]): Array<T & { top: string }> {
  const out: Array<T & { top: string }> = [];
  for (let i = 0, level = 0; i < points.length; i += 1) {
    const p = points[i]!;
    const prev = points[i - 1];
    level = prev && p.px - prev.px < 0.012 ? (level + 1) % levels.length : 0;
    out.push({ ...p, top: levels[level]! });
  }
  return out;
}

function Track({
  lane,
  x,
  hrefFor,
  now,
}: {
  lane: Lane;
  x: (iso: string) => number;
  hrefFor: Props["hrefFor"];
  now: string;
}) {
  const placed = stack(binsOf(lane.events, x));
  // A wait too short to see is not drawn.
  const gaps = lane.events.filter((e): e is GapEvent => e.kind === "gap" && x(e.until) - x(e.at) >= 0.002);
  return (
    <div className="relative h-10">
      <div
        className="absolute top-1/2 h-px bg-slate-200"
        style={{ left: pct(x(lane.start)), width: pct(x(lane.end) - x(lane.start)) }}
      />
      {gaps.map((g) => (
        <GapBar key={g.key} gap={g} x={x} />
      ))}
      {placed.map(({ e, px, top, count, first, last }) => {
        const title =
          count > 1
            ? `${count} events, ${formatClock(first)}–${formatClock(last)}. The most telling: ${eventLabel(e, now)}`
            : eventLabel(e, now);
        const body = (
          <>
            <EventGlyph event={e} small />
            <CountBadge count={count} />
          </>
        );
        return hrefFor ? (
          <a
            key={e.key}
            href={hrefFor(e)}
            tabIndex={-1}
            title={title}
            className="tl-mark"
            style={{ left: pct(px), top }}
          >
            {body}
          </a>
        ) : (
          <span key={e.key} title={title} className="tl-mark" style={{ left: pct(px), top }}>
            {body}
          </span>
        );
      })}
    </div>
  );
}

export function ticksOf(timeline: Pick<Timeline, "start" | "end" | "events">, x: (iso: string) => number): string[] {
  const times = [...new Set(timeline.events.map((e) => e.at))];
  const picked: Array<{ at: string; px: number }> = [
    { at: timeline.start, px: 0 },
    { at: timeline.end, px: 1 },
  ];
  for (const target of [0.25, 0.5, 0.75]) {
    const best = times
      .map((at) => ({ at, px: x(at) }))
      .sort((a, b) => Math.abs(a.px - target) - Math.abs(b.px - target))[0];
    if (best && picked.every((p) => Math.abs(p.px - best.px) > 0.12)) picked.push(best);
  }
  return picked.sort((a, b) => a.px - b.px).map((p) => p.at);
}

/** Where a tick, a compressed stretch or now stands on the chart: a fraction of its width, from 0 to 1. */
export type ChartFrameProps = {
  ticks: Array<{ at: number; label: ReactNode }>;
  /** Long waits drawn shorter, each with its real length. */
  breaks: Array<{ from: number; to: number; label: ReactNode }>;
  /** Where now stands, while something is still open. */
  now: number | null;
  lanes: Array<{ key: string | number; label: ReactNode; track: ReactNode }>;
};

/**
 * What the timeline and a task's overview share: the times along the top, a labelled lane per invocation, the
 * compressed stretches behind the lanes, the line at now, and under the lanes how long each stretch really was.
 */
export function ChartFrame({ ticks, breaks, now, lanes }: ChartFrameProps) {
  return (
    <figure className="overflow-x-auto">
      <figcaption className="sr-only">Timeline chart. The same events are listed below, in order, as text.</figcaption>
      <div className="min-w-[40rem]">
        <div className="grid grid-cols-[minmax(10rem,16rem)_1fr] gap-x-4">
          <div className="text-xs text-slate-500">Times in UTC</div>
          <div aria-hidden="true" className="relative mx-3 h-6 text-[11px] tabular-nums text-slate-500">
            {ticks.map(({ at, label }) => (
              <span
                key={at}
                className="absolute top-0 whitespace-nowrap"
                style={{ left: pct(at), transform: `translateX(${at > 0.9 ? "-100%" : at < 0.1 ? "0" : "-50%"})` }}
              >
                {label}
              </span>
            ))}
          </div>
          <div>
            {lanes.map((lane) => (
              <div key={lane.key} className="flex h-11 min-w-0 items-center border-t border-slate-100 text-sm">
                {lane.label}
              </div>
            ))}
          </div>
          <div aria-hidden="true" className="px-3">
            <div className="relative">
              {breaks.map((b) => (
                <div
                  key={b.from}
                  className="absolute inset-y-0 border-x border-dashed border-slate-300 bg-slate-100/70"
                  style={{ left: pct(b.from), width: pct(b.to - b.from) }}
                />
              ))}
              {lanes.map((lane) => (
                <div key={lane.key} className="h-11 border-t border-slate-100 pt-0.5">
                  {lane.track}
                </div>
              ))}
              {now !== null ? <div className="absolute inset-y-0 w-px bg-rose-400" style={{ left: pct(now) }} /> : null}
            </div>
          </div>
          <div />
          <div aria-hidden="true" className="relative mx-3 h-5 text-[11px] text-slate-500">
            {breaks.map((b) => (
              <span
                key={b.from}
                className="absolute top-0 -translate-x-1/2 whitespace-nowrap"
                style={{ left: pct((b.from + b.to) / 2) }}
              >
                {b.label}
              </span>
            ))}
            {now !== null ? (
              <span className="absolute top-0 -translate-x-full pr-1 text-rose-600" style={{ left: pct(now) }}>
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

export function TimelineChart({ timeline, laneLabel, hrefFor }: Props) {
  const axis = axisOf(timeline);
  const withDate = spansDays(timeline.start, timeline.end);
  const open = timeline.events.some((e) => e.kind === "gap" && e.open);
  return (
    <ChartFrame
      ticks={ticksOf(timeline, axis.x).map((at) => {
        const px = axis.x(at);
        return { at: px, label: formatClock(at, withDate && (px === 0 || px === 1)) };
      })}
      breaks={axis.breaks.map((b) => ({ from: b.from, to: b.to, label: `≈ ${formatDuration(b.ms)}` }))}
      now={open ? axis.x(timeline.now) : null}
      lanes={timeline.lanes.map((lane) => ({
        key: lane.index,
        label: laneLabel(lane),
        track: <Track lane={lane} x={axis.x} hrefFor={hrefFor} now={timeline.now} />,
      }))}
    />
  );
}

export function Legend() {
  const item = "inline-flex items-center gap-1.5";
  return (
    <ul aria-hidden="true" className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-600">
      <li className={item}>
        <span className="inline-block h-3 w-3 rounded-full border border-dashed border-slate-500" /> intent (before
        dispatch)
      </li>
      <li className={item}>
        <span className="inline-flex h-3 w-3 items-center justify-center rounded-full bg-amber-400 text-[8px] font-bold">
          ?
        </span>{" "}
        outcome (✓ committed, ✕ not, ? unknown, ◐ partial)
      </li>
      <li className={item}>
        <span className="inline-flex h-3 w-3 items-center justify-center rounded-sm bg-emerald-600 text-[8px] font-bold text-white">
          ✓
        </span>{" "}
        probe (square)
      </li>
      <li className={item}>
        <span className="inline-block h-3 w-3 rounded-sm bg-indigo-600" /> operator action
      </li>
      <li className={item}>
        <span className="inline-block h-2 w-5 rounded-sm bg-slate-300" /> waited for the outcome
      </li>
      <li className={item}>
        <span className="inline-block h-2 w-5 rounded-sm bg-amber-200" /> still waiting
      </li>
      <li className={item}>
        <span className="inline-block h-2 w-5 rounded-sm ring-1 ring-orange-400" style={hatch("rgb(251 146 60)")} />{" "}
        past the stall window
      </li>
      <li className={item}>
        <span className="inline-block w-5 border-t-2 border-dashed border-slate-400" /> pause before a retry
      </li>
      <li className={item}>
        <span className="inline-block w-5 border-t-2 border-dotted border-amber-500" /> unsettled: waiting for a probe
        or a person
      </li>
      <li className={item}>
        <span className="inline-block h-3 w-5 border-x border-dashed border-slate-300 bg-slate-100" /> a long wait,
        drawn shorter (its length below the chart)
      </li>
    </ul>
  );
}
