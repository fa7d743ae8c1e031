import { RecentInvocations } from "@/components/recent-invocations";
import { getDb } from "@/lib/db/client";
import { listRecentInvocations } from "@/lib/domain/invocations";
import { publicUrl } from "@/lib/env";
import { curlExample } from "@/lib/first-run";
import { requireUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  await requireUser("read");
  const initial = await listRecentInvocations(await getDb());
  return (
    <main className="mx-auto max-w-7xl space-y-6 px-6 py-8">
      <p className="max-w-3xl text-sm text-slate-600">
        Every tool call your agents report, read into one outcome model. An unknown outcome stays unknown until evidence
        settles it: it is never shown as a success or a failure.
      </p>
      <RecentInvocations initial={initial} curl={curlExample(publicUrl(), "<your runtime key>")} />
    </main>
  );
}
