"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { queryKeys } from "@/lib/query/keys";
import { api } from "@/components/api";
import { Button } from "@/components/ui/button";
import { AttemptDetails } from "./attempt-details";

// An invocation with more records than its page carries (docs/outcome-model.md §8's read stays
// bounded however long the history): the older ones, a page at a time, newest
// page first, on demand. `from` is the invocation's attempts_earlier.

type Props = { invocationId: string; runtime: string; from: string; shown: number; total: number };

export function EarlierAttempts({ invocationId, runtime, from, shown, total }: Props) {
  const pages = useInfiniteQuery({
    queryKey: queryKeys.invocations.earlierAttempts(invocationId, runtime, from),
    queryFn: ({ pageParam, signal }) =>
      api.get("/api/v1/invocations/{invocation_id}/attempts", {
        params: { invocation_id: invocationId },
        query: { runtime, before: pageParam },
        signal,
      }),
    initialPageParam: from,
    getNextPageParam: (last) => last.earlier ?? undefined,
    enabled: false,
  });
  const loaded = pages.data?.pages ?? [];
  const count = loaded.reduce((n, p) => n + p.items.length, 0);
  const more = loaded.length === 0 || pages.hasNextPage;
  return (
    <div className="space-y-3" data-testid="earlier-attempts">
      <div className="flex flex-wrap items-center gap-3 rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-sm text-slate-700">
        <span>
          Showing the latest {shown.toLocaleString("en-US")}
          {count > 0 ? ` and ${count.toLocaleString("en-US")} earlier` : ""} of {total.toLocaleString("en-US")} records;
          the timeline above draws the latest {shown.toLocaleString("en-US")}.
        </span>
        {more ? (
          <Button
            type="button"
            onClick={() => void (loaded.length === 0 ? pages.refetch() : pages.fetchNextPage())}
            disabled={pages.isFetching}
          >
            {pages.isFetching ? "Loading…" : "Load earlier records"}
          </Button>
        ) : null}
        {pages.error ? <span className="text-rose-700">Could not load them: {pages.error.message}</span> : null}
      </div>
      {[...loaded]
        .reverse()
        .flatMap((page, p) =>
          page.items.map((a, i) => (
            <AttemptDetails key={a.event_id} attempt={a} index={i} anchor={`earlier-${loaded.length - p}-${i + 1}`} />
          )),
        )}
    </div>
  );
}
