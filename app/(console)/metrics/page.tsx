import { MetricsFilters } from "@/components/metrics/metrics-filters";
import { MetricsView } from "@/components/metrics/metrics-view";
import { readMetricsParams } from "@/components/metrics/range";
import { NotAllowed } from "@/components/not-allowed";
import { ApiError } from "@/lib/errors";
import { requireUser } from "@/lib/identity/session";
import { getMetrics } from "@/lib/metrics/metrics";
import { listRuntimeNames } from "@/lib/identity/runtime-keys";

export const dynamic = "force-dynamic";

type SearchParams = Record<string, string | string[] | undefined>;

// Trust metrics for managers and admins (docs/outcome-model.md §6): the same numbers as GET /api/v1/metrics.
export default async function MetricsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const { user, allowed, db } = await requireUser("manage", "/metrics");
  if (!allowed) {
    return (
      <main className="console-frame py-8">
        <NotAllowed role={user.role} what="trust metrics are for managers and admins" />
      </main>
    );
  }
  const { params, from, to } = readMetricsParams(await searchParams, new Date());
  const [runtimes, result] = await Promise.all([
    listRuntimeNames(db),
    getMetrics(db, { from, to, tool: params.tool || undefined, runtime: params.runtime || undefined }).catch(
      (error: unknown) => {
        if (error instanceof ApiError) return error.message;
        throw error;
      },
    ),
  ]);
  const tools = typeof result === "string" ? [] : result.by_tool.map((r) => r.tool);
  return (
    <main className="console-frame space-y-6 py-8">
      <header>
        <h1 className="text-xl font-semibold">Trust metrics</h1>
        <p className="mt-1 text-sm text-slate-600">
          What happened from {from.toISOString().slice(0, 16).replace("T", " ")} to{" "}
          {to.toISOString().slice(0, 16).replace("T", " ")} UTC
          {params.tool && (
            <>
              {" "}
              for <strong>{params.tool}</strong>
            </>
          )}
          {params.runtime && (
            <>
              {" "}
              on <strong>{params.runtime}</strong>
            </>
          )}
          . Every number opens the invocations behind it.
        </p>
      </header>
      <MetricsFilters params={params} runtimes={runtimes} tools={tools} from={from} to={to} />
      {typeof result === "string" ? (
        <p role="alert" className="rounded-lg border border-rose-200 bg-rose-50 p-4 text-sm text-rose-800">
          {result}
        </p>
      ) : (
        <MetricsView metrics={result} params={params} from={from} to={to} />
      )}
    </main>
  );
}
