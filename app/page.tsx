import { RecentInvocations } from "@/components/recent-invocations";
import { getDb } from "@/lib/db/client";
import { listRecentInvocations } from "@/lib/domain/invocations";
import { consoleIsOpen, publicUrl } from "@/lib/env";
import { curlExample } from "@/lib/first-run";

export const dynamic = "force-dynamic";

export default async function HomePage() {
  const open = consoleIsOpen();
  const initial = open ? await listRecentInvocations(await getDb()) : null;
  return (
    <main className="mx-auto max-w-7xl space-y-6 px-6 py-8">
      <header>
        <h1 className="text-2xl font-semibold tracking-tight">Settle</h1>
        <p className="mt-1 max-w-3xl text-sm text-slate-600">
          Every tool call your agents report, read into one outcome model. An unknown outcome stays unknown until evidence
          settles it: it is never shown as a success or a failure.
        </p>
      </header>
      {initial ? (
        <RecentInvocations initial={initial} curl={curlExample(publicUrl(), "<your runtime key>")} />
      ) : (
        <p className="rounded-lg border border-slate-200 bg-white p-4 text-sm">
          This view is open without sign-in only on the embedded database. Set <code>SETTLE_OPEN_CONSOLE=1</code> to open it
          here, or read invocations through the API with a runtime key.
        </p>
      )}
    </main>
  );
}
