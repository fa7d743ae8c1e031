"use client";

import {
  useMutation,
  useQuery,
  useQueryClient,
  type QueryClient,
  type QueryKey,
  type UseMutationOptions,
} from "@tanstack/react-query";

// The shape the admin pages share (people, runtime keys, the tool catalog,
// policies, webhooks, access tokens): the server renders the list, the page
// keeps it fresh through TanStack Query under its key from lib/query/keys.ts,
// and every change to it reads it again once the change has settled, whether
// it was made or refused (a refusal such as USER_EXISTS often means the list
// is stale).

/** A list the server rendered first, kept fresh under `queryKey`. */
export function useCollection<T>({
  queryKey,
  queryFn,
  initialData,
  refetchInterval,
}: {
  queryKey: QueryKey;
  queryFn: () => Promise<T>;
  /** What the server rendered: shown at once, and read again once it is stale. */
  initialData: T;
  refetchInterval?: number;
}): { data: T; error: Error | null } {
  const { data, error } = useQuery({ queryKey, queryFn, initialData, refetchInterval });
  // Never undefined: initialData is given (TanStack's overload cannot see that through a generic T).
  return { data: data as T, error };
}

/** A change to the collection under `queryKey` (a key prefix refreshes all below it). */
export function useCollectionMutation<TData, TVariables = void>(
  queryKey: QueryKey,
  options: UseMutationOptions<TData, Error, TVariables>,
) {
  const queryClient = useQueryClient();
  return useMutation(refreshingAfter(queryClient, queryKey, options));
}

/**
 * `options` with the collection read again when the mutation settles, after the caller's own onSettled: the
 * mutation stays pending until the fresh list is in, so nothing shows the old rows as the new state.
 */
export function refreshingAfter<TData, TVariables, TOnMutateResult>(
  queryClient: QueryClient,
  queryKey: QueryKey,
  options: UseMutationOptions<TData, Error, TVariables, TOnMutateResult>,
): UseMutationOptions<TData, Error, TVariables, TOnMutateResult> {
  return {
    ...options,
    onSettled: async (...args) => {
      await options.onSettled?.(...args);
      await queryClient.invalidateQueries({ queryKey });
    },
  };
}
