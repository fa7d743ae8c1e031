"use client";

import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import type { SeriesPoint, ToolRow } from "@/lib/metrics/schema";

// Recharts lives on this page only (its client bundle is this component's).

// Drawn at once: the page is read, not watched.
const still = { isAnimationActive: false } as const;

const tick = (bucket: "hour" | "day") => (iso: string) => (bucket === "hour" ? iso.slice(11, 16) : iso.slice(5, 10));

function Panel({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <figure className="rounded-lg border border-slate-200 bg-white p-4">
      <figcaption className="mb-2 text-sm font-medium text-slate-800">{title}</figcaption>
      <div className="h-56">{children}</div>
    </figure>
  );
}

/**
 * One bar width for both per-bucket charts: the widest that lets the second chart's three bars side by side
 * fit a bucket of a half-width panel (about 520 px of plot), so a bar means the same width in both.
 */
export function sharedBarSize(buckets: number): number {
  const perBucket = 520 / Math.max(1, buckets);
  return Math.max(1, Math.min(24, Math.floor((perBucket * 0.8) / 3)));
}

export function MetricsCharts({
  series,
  byTool,
  bucket,
}: {
  series: SeriesPoint[];
  byTool: ToolRow[];
  bucket: "hour" | "day";
}) {
  const barSize = sharedBarSize(series.length);
  // A line needs two points: a single sampled hour is drawn as dots, not as an empty chart.
  const queueDots = series.filter((p) => p.queue_size_max !== null).length < 2 ? { r: 4 } : false;
  const label = (iso: unknown) => `${String(iso).slice(0, 16).replace("T", " ")} UTC`;
  // What every chart over time has: the grid, the time axis, the count axis, the tooltip and the legend.
  const overTime = [
    <CartesianGrid key="grid" strokeDasharray="3 3" vertical={false} />,
    <XAxis key="x" dataKey="at" tickFormatter={tick(bucket)} fontSize={11} minTickGap={16} />,
    <YAxis key="y" allowDecimals={false} fontSize={11} width={36} />,
    <Tooltip key="tooltip" labelFormatter={label} />,
    <Legend key="legend" wrapperStyle={{ fontSize: 12 }} />,
  ];
  const bars = (specs: Array<[keyof SeriesPoint, string, string]>, stackId?: string) =>
    specs.map(([key, name, fill]) => (
      <Bar key={key} dataKey={key} name={name} stackId={stackId} fill={fill} barSize={barSize} {...still} />
    ));
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Panel title={`Duplicates prevented per ${bucket}`}>
        <ResponsiveContainer>
          <BarChart data={series}>
            {overTime}
            {bars(
              [
                ["guard_denials", "guard denials", "#334155"],
                ["probe_found", "probe found", "#0f766e"],
                ["receiver_replays", "receiver replays", "#7c3aed"],
              ],
              "d",
            )}
          </BarChart>
        </ResponsiveContainer>
      </Panel>
      <Panel title={`Unknown outcomes and escalations per ${bucket}`}>
        <ResponsiveContainer>
          <BarChart data={series}>
            {overTime}
            {bars([
              ["unknown_outcomes", "unknown outcomes", "#b45309"],
              ["escalations", "escalations", "#be123c"],
              ["sla_breaches", "SLA breaches", "#f43f5e"],
            ])}
          </BarChart>
        </ResponsiveContainer>
      </Panel>
      <Panel title="Queue size over time">
        <ResponsiveContainer>
          <LineChart data={series}>
            {overTime}
            {(
              [
                ["queue_size_max", "largest", "#0f172a"],
                ["queue_size_avg", "average", "#64748b"],
              ] as const
            ).map(([key, name, stroke]) => (
              <Line key={key} dataKey={key} name={name} stroke={stroke} dot={queueDots} connectNulls {...still} />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </Panel>
      <Panel title="Unknown outcomes per tool, by how they ended">
        <ResponsiveContainer>
          <BarChart data={byTool.filter((t) => t.unknown_outcomes > 0)} layout="vertical">
            <CartesianGrid strokeDasharray="3 3" horizontal={false} />
            <XAxis type="number" allowDecimals={false} fontSize={11} />
            <YAxis type="category" dataKey="tool" fontSize={11} width={120} />
            <Tooltip />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar dataKey="resolved_by_probe" name="probe" stackId="u" fill="#0f766e" {...still} />
            <Bar dataKey="resolved_by_operator" name="operator" stackId="u" fill="#334155" {...still} />
            <Bar dataKey="escalated" name="escalated" stackId="u" fill="#be123c" {...still} />
            <Bar dataKey="open" name="still open" stackId="u" fill="#f59e0b" {...still} />
          </BarChart>
        </ResponsiveContainer>
      </Panel>
    </div>
  );
}
