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
  const x = <XAxis dataKey="at" tickFormatter={tick(bucket)} fontSize={11} minTickGap={16} />;
  const barSize = sharedBarSize(series.length);
  // A line needs two points: a single sampled hour is drawn as dots, not as an empty chart.
  const queueDots = series.filter((p) => p.queue_size_max !== null).length < 2 ? { r: 4 } : false;
  const label = (iso: unknown) => `${String(iso).slice(0, 16).replace("T", " ")} UTC`;
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <Panel title={`Duplicates prevented per ${bucket}`}>
        <ResponsiveContainer>
          <BarChart data={series}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            {x}
            <YAxis allowDecimals={false} fontSize={11} width={36} />
            <Tooltip labelFormatter={label} />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar
              dataKey="guard_denials"
              name="guard denials"
              stackId="d"
              fill="#334155"
              barSize={barSize}
              isAnimationActive={false}
            />
            <Bar
              dataKey="probe_found"
              name="probe found"
              stackId="d"
              fill="#0f766e"
              barSize={barSize}
              isAnimationActive={false}
            />
            <Bar
              dataKey="receiver_replays"
              name="receiver replays"
              stackId="d"
              fill="#7c3aed"
              barSize={barSize}
              isAnimationActive={false}
            />
          </BarChart>
        </ResponsiveContainer>
      </Panel>
      <Panel title={`Unknown outcomes and escalations per ${bucket}`}>
        <ResponsiveContainer>
          <BarChart data={series}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            {x}
            <YAxis allowDecimals={false} fontSize={11} width={36} />
            <Tooltip labelFormatter={label} />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Bar
              dataKey="unknown_outcomes"
              name="unknown outcomes"
              fill="#b45309"
              barSize={barSize}
              isAnimationActive={false}
            />
            <Bar dataKey="escalations" name="escalations" fill="#be123c" barSize={barSize} isAnimationActive={false} />
            <Bar
              dataKey="sla_breaches"
              name="SLA breaches"
              fill="#f43f5e"
              barSize={barSize}
              isAnimationActive={false}
            />
          </BarChart>
        </ResponsiveContainer>
      </Panel>
      <Panel title="Queue size over time">
        <ResponsiveContainer>
          <LineChart data={series}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            {x}
            <YAxis allowDecimals={false} fontSize={11} width={36} />
            <Tooltip labelFormatter={label} />
            <Legend wrapperStyle={{ fontSize: 12 }} />
            <Line
              dataKey="queue_size_max"
              name="largest"
              stroke="#0f172a"
              dot={queueDots}
              connectNulls
              isAnimationActive={false}
            />
            <Line
              dataKey="queue_size_avg"
              name="average"
              stroke="#64748b"
              dot={queueDots}
              connectNulls
              isAnimationActive={false}
            />
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
            <Bar dataKey="resolved_by_probe" name="probe" stackId="u" fill="#0f766e" isAnimationActive={false} />
            <Bar dataKey="resolved_by_operator" name="operator" stackId="u" fill="#334155" isAnimationActive={false} />
            <Bar dataKey="escalated" name="escalated" stackId="u" fill="#be123c" isAnimationActive={false} />
            <Bar dataKey="open" name="still open" stackId="u" fill="#f59e0b" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </Panel>
    </div>
  );
}
