import { Suspense } from "react";
import { QueueView } from "@/components/queue/queue-view";
import { filterQuery, readFilters } from "@/components/queue/filters";
import { anyInvocations, listQueue, queueQuerySchema } from "@/lib/queue/queue";
import { listRuntimeNames } from "@/lib/identity/runtime-keys";
import { publicUrl } from "@/lib/env";
import { curlExample } from "@/lib/first-run";
import { requireUser } from "@/lib/identity/session";

export const dynamic = "force-dynamic";

// The home page is the queue. The first page is read here so it paints at
// once; the browser keeps it live from then on.
export default async function QueuePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { user, db } = await requireUser("read");
  const query = filterQuery(readFilters(await searchParams));
  const parsed = queueQuerySchema.safeParse(Object.fromEntries(new URLSearchParams(query)));
  const [page, runtimes] = await Promise.all([
    // A filter the API would refuse is left to the browser, which shows the refusal.
    parsed.success ? listQueue(db, parsed.data, { scope: {}, me: user.email }) : null,
    listRuntimeNames(db),
  ]);
  // Asked only when it decides something: which empty state an empty queue shows.
  const anyReported = page !== null && page.items.length > 0 ? true : await anyInvocations(db);
  return (
    <Suspense>
      <QueueView
        initial={page ? { query, page } : null}
        anyReported={anyReported}
        runtimes={runtimes}
        curl={curlExample(publicUrl(), "<your runtime key>")}
      />
    </Suspense>
  );
}
