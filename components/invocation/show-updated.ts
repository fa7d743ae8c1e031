"use client";

import { useQueryClient } from "@tanstack/react-query";
import type { InvocationView } from "@/lib/invocations/read";
import { queryKeys } from "@/lib/query/keys";

/**
 * After a review the server answers with the invocation as it is now: the page shows that answer at once, the
 * lists that hold the invocation are read again, and the dialog closes.
 */
export function useShowUpdated(inv: Pick<InvocationView, "invocation_id" | "runtime">, onClose: () => void) {
  const queryClient = useQueryClient();
  return (updated: InvocationView) => {
    queryClient.setQueryData(queryKeys.invocations.detail(inv.invocation_id, inv.runtime), updated);
    void queryClient.invalidateQueries({ queryKey: queryKeys.invocations.all });
    onClose();
  };
}
