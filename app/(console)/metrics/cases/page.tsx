import Link from "next/link";
import { NotAllowed } from "@/components/not-allowed";
import { ApiError } from "@/lib/errors";
import { requireUser } from "@/lib/identity/session";
import { listMetricCases } from "@/lib/metrics/metrics";
import { metricCasesQuerySchema, type MetricCasesPage } from "@/lib/metrics/schema";
import { InvocationId } from "@/components/ui/invocation-id";

export const dynamic = "force-dynamic";

type SearchParams = Record<string, string | string[] | undefined>;

const titles: Record<string, string> = {
  duplicates_prevented: "Duplicates prevented",
  guard_denials: "Guard denials",
  probe_found: "Probes that found the effect",
  receiver_replays: "Receiver replays",
  possible_duplicate_effects: "Possible duplicate effects",
  unknown_outcomes: "Unknown outcomes",
  resolved_by_probe: "Unknown outcomes resolved by probe",
  resolved_by_operator: "Unknown outcomes resolved by an operator",
  escalated: "Unknown outcomes escalated",
  open: "Unknown outcomes still open",
  pending_recovery: "Settled after an unknown outcome",
  escalations: "Escalations",
  retries: "Invocations with retries",
  approval_wait: "Approvals decided",
  sla_breaches: "SLA breaches",
};

// The invocations behind one number of the metrics page, newest event first.
export default async function MetricCasesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const { user, allowed, db } = await requireUser("manage", "/metrics");
  if (!allowed) {
    return (
      <main className="console-frame py-8">
        <NotAllowed role={user.role} what="trust metrics are for managers and admins" />
      </main>
    );
  }
  const search = Object.fromEntries(
    Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]),
  );
  const parsed = metricCasesQuerySchema.safeParse(search);
  let page: MetricCasesPage | null = null;
  let problem = parsed.success ? null : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  if (parsed.success) {
    page = await listMetricCases(db, parsed.data).catch((error: unknown) => {
      if (error instanceof ApiError) {
        problem = error.message;
        return null;
      }
      throw error;
    });
  }
  const next = page?.next_cursor
    ? `/metrics/cases?${new URLSearchParams({ ...(search as Record<string, string>), cursor: page.next_cursor })}`
    : null;
  return (
    <main className="console-frame space-y-4 py-8">
      <Link href="/metrics" className="text-sm text-slate-600 underline">
        ← Trust metrics
      </Link>
      <h1 className="text-xl font-semibold">{parsed.success ? titles[parsed.data.metric] : "Cases"}</h1>
      {parsed.success && (
        <p className="text-sm text-slate-600">
          {parsed.data.from?.toISOString().slice(0, 16).replace("T", " ")} to{" "}
          {parsed.data.to?.toISOString().slice(0, 16).replace("T", " ")} UTC
          {parsed.data.tool && <> · tool {parsed.data.tool}</>}
          {parsed.data.runtime && <> · runtime {parsed.data.runtime}</>}
        </p>
      )}
      {problem && (
        <p role="alert" className="rounded-lg border border-rose-200 bg-rose-50 p-4 text-sm text-rose-800">
          {problem}
        </p>
      )}
      {page?.retired_before && (
        <p
          data-testid="cases-retired"
          className="rounded-lg border border-amber-200 bg-amber-50 p-4 text-sm text-amber-900"
        >
          Records from before {page.retired_before.slice(0, 10)} have left retention and are in the archive (
          <Link href="/admin/retention" className="underline">
            Data retention
          </Link>
          ): this list may show fewer cases from before then than the number counts, which was counted while they were
          here.
        </p>
      )}
      {page && page.items.length === 0 && (
        <p className="rounded-lg border border-dashed border-slate-300 p-6 text-sm text-slate-600">
          No invocations behind this number.
        </p>
      )}
      {page && page.items.length > 0 && (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
          <table className="w-full text-sm" aria-label="Cases">
            <thead className="bg-slate-50 text-left text-xs text-slate-600">
              <tr>
                {["When (UTC)", "Invocation", "Task", "Runtime", "Tool", "Status now", "What was counted"].map((h) => (
                  <th key={h} scope="col" className="px-3 py-2 font-medium">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {page.items.map((c, i) => (
                <tr key={`${c.runtime}/${c.invocation_id}/${i}`}>
                  <td className="whitespace-nowrap px-3 py-1.5 tabular-nums">{c.at.slice(0, 19).replace("T", " ")}</td>
                  <td className="px-3 py-1.5 font-mono text-xs">
                    <Link
                      className="underline"
                      href={`/invocations/${encodeURIComponent(c.invocation_id)}?runtime=${encodeURIComponent(c.runtime)}`}
                    >
                      <InvocationId id={c.invocation_id} />
                    </Link>
                  </td>
                  <td className="px-3 py-1.5 font-mono text-xs">{c.task_id}</td>
                  <td className="px-3 py-1.5">{c.runtime}</td>
                  <td className="px-3 py-1.5 font-mono text-xs">{c.tool}</td>
                  <td className="px-3 py-1.5">{c.status}</td>
                  <td className="px-3 py-1.5 text-slate-700">{c.detail}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next && (
        <Link href={next} className="inline-block text-sm font-medium underline">
          Next page
        </Link>
      )}
    </main>
  );
}
