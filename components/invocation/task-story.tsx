"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import type { TaskStory as Story } from "@/lib/invocations/task-page";
import { queryKeys } from "@/lib/query/keys";
import { api } from "@/components/api";
import { TimelineStory } from "@/components/timeline/timeline-story";
import { attemptAnchor, invocationHref } from "@/lib/invocations/links";
import { InvocationId } from "../ui/invocation-id";

// The task's story, every event in words, loaded after the page a page at a
// time (GET /api/v1/tasks/{id}/timeline): a task with a thousand attempts
// does not put them all in the page. Envelopes are on the invocation page.

const FIRST = 150;

export const taskStoryKey = (taskId: string, runtime: string) =>
  [...queryKeys.tasks.detail(taskId, runtime), "story"] as const;

export function TaskStory({ taskId, runtime }: { taskId: string; runtime: string }) {
  const [limit, setLimit] = useState(FIRST);
  const { data, error, isFetching } = useQuery({
    queryKey: [...taskStoryKey(taskId, runtime), limit],
    // The route describes its events loosely (their kinds grow); they are the timeline builder's, as Story says.
    queryFn: async ({ signal }) =>
      (await api.get("/api/v1/tasks/{task_id}/timeline", {
        params: { task_id: taskId },
        query: { runtime, limit },
        signal,
      })) as Story,
    placeholderData: keepPreviousData,
  });
  if (!data) {
    return (
      <p className="text-sm text-slate-600">
        {error ? (
          <span className="text-rose-700">Could not load the events: {error.message}</span>
        ) : (
          "Loading the events…"
        )}
      </p>
    );
  }
  const lane = (i: number) => data.lanes[i]!;
  return (
    <TimelineStory
      timeline={data}
      paging={{ total: data.total, loading: isFetching, onMore: (n) => setLimit(data.events.length + n) }}
      laneTag={(e) => (
        <span className="inline-block max-w-full truncate rounded bg-slate-100 px-1.5 py-0.5 font-mono text-[11px] text-slate-700">
          {lane(e.lane).tool} · <InvocationId id={lane(e.lane).invocation_id} />
        </span>
      )}
      recordHref={(e) => invocationHref(lane(e.lane).invocation_id, lane(e.lane).runtime, attemptAnchor(e.index))}
    />
  );
}
