"use client";

import { useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useMemo } from "react";
import type { InvocationView, TaskView } from "@/lib/domain/invocations";
import { buildTimeline, type Lane, type TaskTimelineData } from "@/lib/domain/timeline";
import { api } from "@/lib/query/api";
import { queryKeys } from "@/lib/query/keys";
import { CommitStateLabel, StatusBadge } from "@/components/status-badge";
import { queueStatuses } from "@/lib/domain/status";
import { formatDateTime } from "@/components/timeline/format";
import { TimelineChart } from "@/components/timeline/timeline-chart";
import { eventAnchor, TimelineStory } from "@/components/timeline/timeline-story";
import { attemptAnchor, invocationApiPath, invocationHref, taskApiPath } from "./links";

// A task's invocations on one axis, kept live: the task (every invocation's
// status and version) is read every 2 s, and only an invocation whose
// summary moved is read again in full. Envelopes are not shown here, so the
// server leaves them out of the first render; these queries therefore live
// under the task's key, apart from the invocation page's.

type Props = { initial: TaskTimelineData; renderedAt: string; stallWindowS: number };

const invocationKey = (taskId: string, runtime: string, invocationId: string) => [...queryKeys.tasks.detail(taskId, runtime), "invocation", invocationId] as const;

const changed = (s: TaskView["invocations"][number], d: InvocationView) =>
  s.version !== d.version || s.status !== d.status || s.attempt_count !== d.attempt_count || s.last_attempt_at !== d.last_attempt_at;

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

export function TaskDetail({ initial, renderedAt, stallWindowS }: Props) {
  const queryClient = useQueryClient();
  const { task_id, runtime } = initial.task;
  const { data: task, dataUpdatedAt, error } = useQuery({
    queryKey: queryKeys.tasks.detail(task_id, runtime),
    queryFn: ({ signal }) => api<TaskView>(taskApiPath(task_id, runtime), { signal }),
    initialData: initial.task,
    initialDataUpdatedAt: Date.parse(renderedAt),
    refetchInterval: 2_000,
  });
  const initialById = useMemo(() => new Map(initial.invocations.map((i) => [i.invocation_id, i])), [initial.invocations]);
  const invocations = useQueries({
    queries: task.invocations.map((s) => ({
      queryKey: invocationKey(task_id, runtime, s.invocation_id),
      queryFn: ({ signal }: { signal: AbortSignal }) => api<InvocationView>(invocationApiPath(s.invocation_id, s.runtime), { signal }),
      initialData: initialById.get(s.invocation_id),
      initialDataUpdatedAt: Date.parse(renderedAt),
      staleTime: Infinity,
    })),
    combine: (results) => results.flatMap((r) => (r.data ? [r.data] : [])),
  });

  useEffect(() => {
    for (const s of task.invocations) {
      const key = invocationKey(task_id, runtime, s.invocation_id);
      const cached = queryClient.getQueryData<InvocationView>(key);
      if (cached && changed(s, cached)) void queryClient.invalidateQueries({ queryKey: key, exact: true });
    }
  }, [task, queryClient, task_id, runtime]);

  const now = new Date(dataUpdatedAt).toISOString();
  const timeline = useMemo(() => buildTimeline(invocations, { now: new Date(now), stallWindowS }), [invocations, now, stallWindowS]);
  const needPerson = task.invocations.filter((i) => queueStatuses.includes(i.status)).length;

  return (
    <main className="mx-auto max-w-7xl space-y-6 px-6 py-6">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-600">
        <ol className="flex flex-wrap items-center gap-1">
          <li><Link href="/" className="text-indigo-700 hover:underline">Queue</Link> <span aria-hidden="true">/</span></li>
          <li aria-current="page" className="break-all">Task {task.task_id}</li>
        </ol>
      </nav>
      <header className="space-y-2">
        <p className="text-xs font-medium uppercase tracking-wide text-slate-500">Task</p>
        <h1 className="break-all font-mono text-xl font-semibold">{task.task_id}</h1>
        <p className="text-sm text-slate-700">
          Runtime <span className="font-mono">{task.runtime}</span> · {task.invocations.length} invocation{task.invocations.length === 1 ? "" : "s"}
          {needPerson > 0 ? <span className="font-medium text-amber-900"> · {needPerson} need{needPerson === 1 ? "s" : ""} a person</span> : null} · first seen{" "}
          <time dateTime={task.first_seen_at}>{formatDateTime(task.first_seen_at)}</time>, last{" "}
          <time dateTime={task.last_seen_at}>{formatDateTime(task.last_seen_at)}</time>
        </p>
        <p aria-live="polite" className="text-xs text-slate-500">
          {error ? <span className="text-rose-700">Not refreshing: {error.message}</span> : "Live, refreshes every 2 s."}
        </p>
      </header>

      <section aria-labelledby="invocations-heading" className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
        <h2 id="invocations-heading" className="px-4 pt-3 text-sm font-semibold">Invocations</h2>
        <table className="mt-2 w-full text-left text-sm">
          <thead className="bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
            <tr>
              <th scope="col" className="px-4 py-2 font-medium">Tool</th>
              <th scope="col" className="px-4 py-2 font-medium">Status</th>
              <th scope="col" className="px-4 py-2 font-medium">Commit state</th>
              <th scope="col" className="px-4 py-2 font-medium">Next action</th>
              <th scope="col" className="px-4 py-2 text-right font-medium">Attempts</th>
              <th scope="col" className="px-4 py-2 font-medium">Assignee</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {task.invocations.map((s) => (
              <tr key={s.invocation_id} className="align-top">
                <td className="px-4 py-2">
                  <Link href={invocationHref(s.invocation_id, s.runtime)} className="break-all font-mono text-xs font-medium text-indigo-700 hover:underline">{s.tool}</Link>
                  <div className="break-all font-mono text-[11px] text-slate-500">{s.invocation_id}</div>
                  {s.user_message && queueStatuses.includes(s.status) ? <div className="mt-0.5 whitespace-pre-wrap break-words text-xs text-slate-600">“{s.user_message}”</div> : null}
                </td>
                <td className="px-4 py-2">
                  <StatusBadge status={s.status} />
                  {s.conflict ? <div className="mt-1 text-xs font-semibold text-rose-800"><span aria-hidden="true">⚠ </span>conflicting evidence</div> : null}
                </td>
                <td className="px-4 py-2"><CommitStateLabel state={s.commit_state} /></td>
                <td className="px-4 py-2 font-mono text-xs">{s.next_action}</td>
                <td className="px-4 py-2 text-right tabular-nums">{s.attempt_count}</td>
                <td className="break-all px-4 py-2 text-xs">{s.assignee ?? <span className="text-slate-400">nobody</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="timeline-heading" className="space-y-4 rounded-lg border border-slate-200 bg-white p-4">
        <h2 id="timeline-heading" className="text-sm font-semibold">Timeline <span className="font-normal text-slate-500">(a lane per invocation)</span></h2>
        <TimelineChart timeline={timeline} hrefFor={(e) => `#${eventAnchor(e)}`} laneLabel={(lane) => <LaneLabel lane={lane} />} />
        <TimelineStory
          timeline={timeline}
          laneTag={(lane) => (
            <span className="inline-block max-w-full truncate rounded bg-slate-100 px-1.5 py-0.5 font-mono text-[11px] text-slate-700">
              {lane.invocation.tool} · {lane.invocation.invocation_id}
            </span>
          )}
          recordHref={(e) => {
            const lane = timeline.lanes[e.lane]!.invocation;
            return invocationHref(lane.invocation_id, lane.runtime, attemptAnchor(e.index));
          }}
        />
      </section>
    </main>
  );
}
