import Link from "next/link";
import type { InvocationView } from "@/lib/domain/invocations";
import { buildTimeline, type Lane } from "@/lib/domain/timeline";
import { StatusBadge } from "@/components/status-badge";
import { TimelineChart } from "@/components/timeline/timeline-chart";
import { invocationHref } from "./links";

// The task page's chart, rendered on the server only: a lane for each
// invocation of the page's first page, compact marks, no data for the client
// to rebuild it from. The page refreshes it when the task changes.

type Props = { invocations: InvocationView[]; now: Date; stallWindowS: number };

function LaneLabel({ lane }: { lane: Lane }) {
  const inv = lane.invocation;
  return (
    <Link href={invocationHref(inv.invocation_id, inv.runtime)} className="group flex min-w-0 flex-col rounded px-1 py-0.5 hover:bg-slate-50">
      <span className="flex min-w-0 items-center gap-2">
        <span className="truncate font-mono text-xs font-medium text-indigo-700 group-hover:underline">{inv.tool}</span>
        <StatusBadge status={inv.status} />
      </span>
      <span className="truncate font-mono text-[11px] text-slate-500">{inv.invocation_id}</span>
    </Link>
  );
}

export function TaskChart({ invocations, now, stallWindowS }: Props) {
  const timeline = buildTimeline(invocations, { now, stallWindowS });
  return <TimelineChart timeline={timeline} laneLabel={(lane) => <LaneLabel lane={lane} />} />;
}
