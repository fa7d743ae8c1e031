import type { Timeline } from "@/lib/invocations/timeline-builder";

// The axis the console draws lanes on: linear in time, except that an
// interval much longer than the rest (a stalled intent beside a burst of
// retries, an operator acting an hour later) is drawn shorter, with a break
// that says how long it was, so the burst stays readable.

const ms = (iso: string) => Date.parse(iso);

export type AxisBreak = { from: number; to: number; ms: number };
export type Axis = { x: (iso: string) => number; breaks: AxisBreak[] };

export function axisOf(timeline: Pick<Timeline, "start" | "end" | "events">): Axis {
  const points = [
    ...new Set([
      ms(timeline.start),
      ms(timeline.end),
      ...timeline.events.flatMap((e) => (e.kind === "gap" ? [ms(e.at), ms(e.until)] : [ms(e.at)])),
    ]),
  ].sort((a, b) => a - b);
  if (points.length < 2) return { x: () => 0, breaks: [] };
  const intervals = points.slice(1).map((p, i) => p - points[i]!);
  const sorted = [...intervals].sort((a, b) => a - b);
  const cap = Math.max(4 * sorted[Math.floor((sorted.length - 1) * 0.75)]!, 1000);
  // Only an interval at least twice the cap is drawn shorter: a break that
  // saves little space would only make the axis harder to read.
  const broken = (d: number) => d >= 2 * cap;
  const widths = intervals.map((d) => (broken(d) ? cap : d));
  const total = widths.reduce((a, b) => a + b, 0);
  const offsets = [0];
  for (const w of widths) offsets.push(offsets[offsets.length - 1]! + w / total);
  const breaks = intervals.flatMap((d, i) => (broken(d) ? [{ from: offsets[i]!, to: offsets[i + 1]!, ms: d }] : []));
  const x = (iso: string) => {
    const t = ms(iso);
    if (t <= points[0]!) return 0;
    if (t >= points[points.length - 1]!) return 1;
    let lo = 0;
    let hi = points.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (points[mid]! <= t) lo = mid;
      else hi = mid;
    }
    return offsets[lo]! + ((t - points[lo]!) / intervals[lo]!) * (offsets[lo + 1]! - offsets[lo]!);
  };
  return { x, breaks };
}
