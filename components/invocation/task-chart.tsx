"use client";

import Link from "next/link";
import { StatusBadge } from "@/components/status-badge";
import { OverviewChart } from "@/components/timeline/overview-chart";
import type { Overview, OverviewLane } from "@/components/timeline/overview";
import { invocationHref } from "@/lib/invocations/links";
import { InvocationId } from "../ui/invocation-id";

// The task page's chart: a lane for each invocation of the page's first
// page, from the compact marks the server computed (components/timeline/overview.ts).

function LaneLabel({ lane }: { lane: OverviewLane }) {
  return (
    <Link
      href={invocationHref(lane.invocation_id, lane.runtime)}
      className="group flex min-w-0 flex-col rounded px-1 py-0.5 hover:bg-slate-50"
    >
      <span className="flex min-w-0 items-center gap-2">
        <span className="truncate font-mono text-xs font-medium text-indigo-700 group-hover:underline">
          {lane.tool}
        </span>
        <StatusBadge status={lane.status} />
      </span>
      <InvocationId id={lane.invocation_id} className="truncate text-[11px] text-slate-500" />
    </Link>
  );
}

export function TaskChart({ overview }: { overview: Overview }) {
  return <OverviewChart overview={overview} laneLabel={(lane) => <LaneLabel lane={lane} />} />;
}
