import { CommitStateLabel, StatusBadge } from "@/components/status-badge";
import { getDb } from "@/lib/db/client";
import { listQueue, queueQuerySchema } from "@/lib/domain/queue";
import { requireUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

// Interim: the queue as a plain server-rendered list, until the interactive queue lands.
export default async function HomePage() {
  const { user } = await requireUser("read");
  const page = await listQueue(await getDb(), queueQuerySchema.parse({}), { scope: {}, me: user.email });
  return (
    <main className="mx-auto max-w-7xl space-y-4 px-6 py-8">
      <h1 className="text-lg font-semibold">Queue <span className="font-normal text-slate-500">({page.total})</span></h1>
      <ul className="divide-y divide-slate-100 rounded-lg border border-slate-200 bg-white text-sm">
        {page.items.map((i) => (
          <li key={`${i.runtime}/${i.invocation_id}`} data-testid="invocation-row" className="flex gap-3 px-4 py-2">
            <StatusBadge status={i.status} />
            <CommitStateLabel state={i.commit_state} />
            <span className="font-medium">{i.tool}</span>
            <span className="font-mono text-xs">{i.invocation_id}</span>
          </li>
        ))}
      </ul>
    </main>
  );
}
