"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useMemo, useRef, useState } from "react";
import type { InvocationSummary } from "@/lib/invocations/read";
import type { TaskPageData } from "@/lib/invocations/task-page";
import { compareRelevance, countNeedingPerson, TASK_PAGE_SIZE } from "@/lib/invocations/task-order";
import { queueStatuses } from "@/lib/outcome/status";
import { queryKeys } from "@/lib/query/keys";
import { api } from "@/components/api";
import { CommitStateLabel, StatusBadge } from "@/components/status-badge";
import { Button } from "@/components/ui/button";
import { DataTable, type Column } from "@/components/ui/data-table";
import { Breadcrumb, Subsection } from "@/components/ui/page";
import { formatDateTime } from "@/components/timeline/format";
import type { Overview } from "@/components/timeline/overview";
import { invocationHref } from "@/lib/invocations/links";
import { nextActionLabel } from "@/components/queue/filters";
import { TaskChart } from "./task-chart";
import { TaskStory, taskStoryKey } from "./task-story";
import { TaskGuardRefusals } from "./guard-refusals";
import { InvocationId } from "../ui/invocation-id";

// A task, kept live: the server renders the first page of its invocations
// (those that need a person, then the latest) and their chart; the task's
// summaries are read every 2 s, give the rest of the list ("Show more"), and
// when one moved, the chart is rendered again and the story read again.

type Props = { initial: Omit<TaskPageData, "invocations">; overview: Overview };

const MORE = 200;

const signature = (rows: Pick<InvocationSummary, "invocation_id" | "version" | "status">[]) =>
  rows
    .map((s) => `${s.invocation_id}:${s.version}:${s.status}`)
    .sort()
    .join("\n");

const columns: Array<Column<InvocationSummary>> = [
  {
    header: "Tool",
    cell: (s) => (
      <>
        <Link
          href={invocationHref(s.invocation_id, s.runtime)}
          className="break-all font-mono text-xs font-medium text-indigo-700 hover:underline"
        >
          {s.tool}
        </Link>
        <div className="text-[11px] text-slate-500">
          <InvocationId id={s.invocation_id} copy />
        </div>
        {s.user_message && queueStatuses.includes(s.status) ? (
          <div className="mt-0.5 whitespace-pre-wrap break-words text-xs text-slate-600">“{s.user_message}”</div>
        ) : null}
      </>
    ),
  },
  {
    header: "Status",
    cell: (s) => (
      <>
        <StatusBadge status={s.status} />
        {s.conflict ? (
          <div className="mt-1 text-xs font-semibold text-rose-800">
            <span aria-hidden="true">⚠ </span>conflicting evidence
          </div>
        ) : null}
      </>
    ),
  },
  { header: "Commit state", cell: (s) => <CommitStateLabel state={s.commit_state} /> },
  {
    header: "Next action",
    className: "nowrap text-xs",
    cell: (s) => <span title={s.next_action}>{nextActionLabel(s.next_action)}</span>,
  },
  { header: "Attempts", className: "right tabular-nums", cell: (s) => s.attempt_count },
  {
    header: "Assignee",
    className: "break-all text-xs",
    cell: (s) => s.assignee ?? <span className="text-slate-400">nobody</span>,
  },
];

export function TaskDetail({ initial, overview }: Props) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const { task_id, runtime } = initial.task;
  const [shown, setShown] = useState(TASK_PAGE_SIZE);
  const { data, error } = useQuery({
    queryKey: queryKeys.tasks.detail(task_id, runtime),
    queryFn: ({ signal }) => api.get("/api/v1/tasks/{task_id}", { params: { task_id }, query: { runtime }, signal }),
    refetchInterval: 2_000,
  });
  const all = useMemo(() => (data ? [...data.invocations].sort(compareRelevance) : null), [data]);
  const rows = all ? all.slice(0, shown) : initial.rows;
  const total = all?.length ?? initial.total;
  const needPerson = all ? countNeedingPerson(all) : initial.need_person;
  const task = data ?? initial.task;

  // What the server drew: when the task moves past it, draw again.
  const drawn = useRef<string | null>(null);
  useEffect(() => {
    if (!all) return;
    const now = signature(all);
    if (drawn.current === null) {
      const seen = new Map(all.map((s) => [s.invocation_id, s]));
      const moved =
        all.length !== initial.total ||
        initial.rows.some(
          (r) => seen.get(r.invocation_id)?.version !== r.version || seen.get(r.invocation_id)?.status !== r.status,
        );
      drawn.current = moved ? "" : now;
    }
    if (drawn.current !== now) {
      drawn.current = now;
      router.refresh();
      void queryClient.invalidateQueries({ queryKey: taskStoryKey(task_id, runtime) });
    }
  }, [all, initial, router, queryClient, task_id, runtime]);

  return (
    <main className="console-frame space-y-6 py-6">
      <Breadcrumb trail={[{ href: "/", label: "Queue" }]} current={`Task ${task_id}`} />
      <header className="space-y-2">
        <p className="text-xs font-medium uppercase tracking-wide text-slate-500">Task</p>
        <h1 className="break-all font-mono text-xl font-semibold">{task_id}</h1>
        <p className="text-sm text-slate-700">
          Runtime <span className="font-mono">{runtime}</span> · {total} invocation{total === 1 ? "" : "s"}
          {needPerson > 0 ? (
            <span className="font-medium text-amber-900">
              {" "}
              · {needPerson} need{needPerson === 1 ? "s" : ""} a person
            </span>
          ) : null}{" "}
          · first seen <time dateTime={task.first_seen_at}>{formatDateTime(task.first_seen_at)}</time>, last{" "}
          <time dateTime={task.last_seen_at}>{formatDateTime(task.last_seen_at)}</time>
        </p>
        <p aria-live="polite" className="text-xs text-slate-500">
          {error ? (
            <span className="text-rose-700">Not refreshing: {error.message}</span>
          ) : (
            "Live, refreshes every 2 s."
          )}
        </p>
      </header>

      <Subsection
        id="invocations-heading"
        title={
          <>
            Invocations{" "}
            {total > TASK_PAGE_SIZE ? (
              <span className="font-normal text-slate-500">(those that need a person first, then the latest)</span>
            ) : null}
          </>
        }
      >
        <DataTable
          caption={`Invocations of task ${task_id}`}
          columns={columns}
          rows={rows}
          row={{ key: (s) => s.invocation_id, top: true }}
          footer={
            total > rows.length ? (
              <>
                Showing {rows.length} of {total}.
                <Button disabled={!all} onClick={() => setShown(rows.length + MORE)}>
                  {all ? `Show ${Math.min(MORE, total - rows.length)} more` : "Loading…"}
                </Button>
              </>
            ) : null
          }
        />
      </Subsection>

      <TaskGuardRefusals refusals={data?.guard_refusals ?? initial.refusals} runtime={runtime} />

      <section aria-labelledby="timeline-heading" className="space-y-4 rounded-lg border border-slate-200 bg-white p-4">
        <h2 id="timeline-heading" className="text-sm font-semibold">
          Timeline{" "}
          <span className="font-normal text-slate-500">
            {initial.total > TASK_PAGE_SIZE
              ? `(a lane for each of the first ${TASK_PAGE_SIZE} invocations listed; every event below)`
              : "(a lane per invocation)"}
          </span>
        </h2>
        <TaskChart overview={overview} />
        <TaskStory taskId={task_id} runtime={runtime} />
      </section>
    </main>
  );
}
