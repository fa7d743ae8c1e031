"use client";

import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import type { QueuePage } from "@/lib/queue/queue";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { filterParams, filterQuery, rowKey, type QueueFilterState } from "./filters";

/** Under the 2 s the issue allows, with room for the request itself. */
export const LIVE_INTERVAL_MS = 1_500;

export type InitialQueue = { query: string; page: QueuePage };

/**
 * The queue for a filter, every loaded page refetched together so rows that
 * changed or arrived show up without a reload; rows are keyed by runtime and
 * invocation id by the table, so selection, focus and scroll survive.
 */
export function useQueue(filters: QueueFilterState, initial: InitialQueue | null) {
  const query = filterQuery(filters);
  const key = queryKeys.invocations.queue(Object.fromEntries(new URLSearchParams(query)));
  const result = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam, signal }) =>
      api.get("/api/v1/queue", { query: { ...filterParams(filters), cursor: pageParam || undefined }, signal }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    initialData: initial && initial.query === query ? { pages: [initial.page], pageParams: [null] } : undefined,
    refetchInterval: LIVE_INTERVAL_MS,
    refetchIntervalInBackground: false,
    placeholderData: keepPreviousData,
  });
  const pages = useMemo(() => result.data?.pages ?? [], [result.data]);
  // Pages are refetched one after another; a row that moved across a page boundary in between is shown once.
  const items = useMemo(() => {
    const seen = new Set<string>();
    return pages
      .flatMap((p) => p.items)
      .filter((r) => {
        const k = rowKey(r);
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
  }, [pages]);
  const first = pages[0];
  return {
    ...result,
    items,
    total: first?.total ?? 0,
    // Older servers send no flag: their total is exact.
    totalCapped: first?.total_capped ?? false,
    asOf: pages[pages.length - 1]?.as_of ?? new Date().toISOString(),
    loaded: Boolean(first),
  };
}

/** Whether any runtime has ever reported anything; asked only while the queue is empty. */
export function useAnyReported(enabled: boolean, initial: boolean) {
  const { data } = useQuery({
    queryKey: [...queryKeys.invocations.all, "any-reported"],
    queryFn: async () => (await api.get("/api/v1/invocations", { query: { limit: 1 } })).items.length > 0,
    initialData: initial,
    enabled: enabled && !initial,
    refetchInterval: LIVE_INTERVAL_MS,
  });
  return data;
}
