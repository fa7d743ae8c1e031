"use client";

import { useQuery } from "@tanstack/react-query";
import type { InvocationSummary } from "@/lib/domain/invocations";
import { queryKeys } from "@/lib/query/keys";
import { CommitStateLabel, StatusBadge } from "./status-badge";

type Recent = { items: InvocationSummary[]; total: number; as_of: string };

async function fetchRecent(): Promise<Recent> {
  const res = await fetch("/api/console/invocations", { headers: { accept: "application/json" } });
  const body = (await res.json()) as Recent | { agent_message?: string };
  if (!res.ok) throw new Error("agent_message" in body && body.agent_message ? body.agent_message : `HTTP ${res.status}`);
  return body as Recent;
}

function ago(iso: string, now: string): string {
  const s = Math.max(0, Math.round((Date.parse(now) - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

export function RecentInvocations({ initial, curl }: { initial: Recent; curl: string }) {
  const { data, error, isFetching } = useQuery({
    queryKey: queryKeys.invocations.recent(),
    queryFn: fetchRecent,
    initialData: initial,
    refetchInterval: 2_000,
  });

  return (
    <section aria-labelledby="recent-heading" className="rounded-lg border border-slate-200 bg-white shadow-sm">
      <div className="flex items-center justify-between border-b border-slate-200 px-4 py-3">
        <h2 id="recent-heading" className="text-sm font-semibold">
          Recent invocations <span className="font-normal text-slate-500">({data.total})</span>
        </h2>
        <p className="text-xs text-slate-500" aria-live="polite">
          {error ? (
            <span className="text-rose-700">Not refreshing: {error.message}</span>
          ) : (
            <>
              <span className={`mr-1 inline-block h-2 w-2 rounded-full ${isFetching ? "bg-sky-500" : "bg-emerald-500"}`} aria-hidden="true" />
              Live, refreshes every 2 s
            </>
          )}
        </p>
      </div>
      {data.items.length === 0 ? (
        <EmptyState curl={curl} />
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm">
            <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="px-4 py-2 font-medium">Status</th>
                <th scope="col" className="px-4 py-2 font-medium">Commit state</th>
                <th scope="col" className="px-4 py-2 font-medium">Tool</th>
                <th scope="col" className="px-4 py-2 font-medium">Task / invocation</th>
                <th scope="col" className="px-4 py-2 font-medium">Next action</th>
                <th scope="col" className="px-4 py-2 text-right font-medium">Attempts</th>
                <th scope="col" className="px-4 py-2 font-medium">Runtime</th>
                <th scope="col" className="px-4 py-2 font-medium">Last activity</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {data.items.map((inv) => (
                <tr key={`${inv.runtime}/${inv.invocation_id}`} data-testid="invocation-row" className="align-top">
                  <td className="px-4 py-2">
                    <StatusBadge status={inv.status} />
                    {inv.conflict ? <span className="ml-1 text-xs font-semibold text-rose-700">conflicting evidence</span> : null}
                  </td>
                  <td className="px-4 py-2"><CommitStateLabel state={inv.commit_state} /></td>
                  <td className="px-4 py-2">
                    <div className="font-medium">{inv.tool}</div>
                    <div className="text-xs text-slate-500">{inv.effect_class ?? "unclassified write"}</div>
                  </td>
                  <td className="max-w-xs px-4 py-2">
                    <div className="truncate font-mono text-xs">{inv.task_id}</div>
                    <div className="truncate font-mono text-xs text-slate-500">{inv.invocation_id}</div>
                    {inv.user_message ? <div className="mt-1 truncate text-xs text-slate-600">“{inv.user_message}”</div> : null}
                  </td>
                  <td className="px-4 py-2 font-mono text-xs">{inv.next_action}</td>
                  <td className="px-4 py-2 text-right tabular-nums">{inv.attempt_count}</td>
                  <td className="px-4 py-2 text-xs">{inv.runtime}</td>
                  <td className="whitespace-nowrap px-4 py-2 text-xs text-slate-600" title={inv.last_attempt_at}>
                    {ago(inv.last_attempt_at, data.as_of)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function EmptyState({ curl }: { curl: string }) {
  return (
    <div className="space-y-3 px-4 py-8 text-sm text-slate-700">
      <p className="font-medium text-slate-900">Nothing has been reported yet.</p>
      <p>
        Agent runtimes send Settle one record per tool-call attempt. When Settle started on an empty database it printed a
        runtime key named <code className="rounded bg-slate-100 px-1">local</code> in the terminal; send a first envelope with it:
      </p>
      <pre className="overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100">{curl}</pre>
      <p>
        Lost the key? Create another with <code className="rounded bg-slate-100 px-1">npm run -s settle -- keys create my-runtime</code>.
        This list updates by itself.
      </p>
    </div>
  );
}
