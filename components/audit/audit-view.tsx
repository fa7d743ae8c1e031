"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { Download } from "lucide-react";
import Link from "next/link";
import type { AuditEntry, AuditPage } from "@/lib/audit/audit";
import { queryKeys } from "@/lib/query/keys";
import { actionMeta } from "../actions/action-meta";
import { api } from "../api";
import { StatusBadge } from "../status-badge";
import { Button } from "../ui/button";
import { errorText } from "../ui/error-alert";
import { AuditFilters } from "./audit-filters";
import { withParams, type AuditParams } from "./params";
import { formatUtc } from "./time";

const PAGE_SIZE = 50;

function actionLabel(e: AuditEntry): { label: string; detail: string | null } {
  const label = actionMeta[e.action as keyof typeof actionMeta]?.label ?? e.action;
  if (e.result) return { label, detail: e.result };
  if (e.commit_state) return { label, detail: `as ${e.commit_state.replace("_", " ")}` };
  // An assignment without a note of its own already reads "assigned to …" in the note column.
  if (e.assignee && !e.note?.includes(e.assignee)) return { label, detail: `to ${e.assignee}` };
  return { label, detail: null };
}

const human = (name: string) => name.charAt(0).toUpperCase() + name.slice(1).replaceAll("_", " ");

/** What an admin action changed: the fields whose value differs, before → after. */
function changeText(e: AuditEntry): string {
  const keys = [...new Set([...Object.keys(e.before ?? {}), ...Object.keys(e.after ?? {})])];
  const show = (v: unknown) => (v === undefined || v === null ? "—" : typeof v === "string" ? v : JSON.stringify(v));
  const changed = keys.filter((k) => JSON.stringify(e.before?.[k]) !== JSON.stringify(e.after?.[k]));
  if (!e.before) return keys.map((k) => `${k}: ${show(e.after?.[k])}`).join(", ");
  if (!e.after) return `removed (${keys.map((k) => `${k}: ${show(e.before?.[k])}`).join(", ")})`;
  return changed.map((k) => `${k}: ${show(e.before?.[k])} → ${show(e.after?.[k])}`).join(", ") || "no change";
}

function AdminRow({ e }: { e: AuditEntry }) {
  return (
    <tr data-testid="audit-row" data-kind="admin" className="align-top">
      <td className="whitespace-nowrap px-3 py-2 font-mono text-xs text-slate-700">
        <time dateTime={e.at}>{formatUtc(e.at).replace(" UTC", "")}</time>
      </td>
      <td className="max-w-[14rem] break-words px-3 py-2">{e.actor}</td>
      <td className="px-3 py-2">
        <div className="whitespace-nowrap font-medium">{human(e.action)}</div>
        <div className="text-xs text-slate-600">admin</div>
      </td>
      <td colSpan={2} className="max-w-[16rem] px-3 py-2">
        <span className="break-all font-mono text-xs text-slate-800">{e.target_id}</span>
        <div className="text-xs text-slate-600">{e.target_type?.replaceAll("_", " ")}</div>
      </td>
      <td colSpan={2} className="max-w-md whitespace-pre-wrap break-words px-3 py-2 text-slate-800">
        {changeText(e)}
      </td>
    </tr>
  );
}

function Row({ e }: { e: AuditEntry }) {
  if (e.kind === "admin" || !e.invocation_id || !e.task_id || !e.runtime || !e.from_status || !e.to_status)
    return <AdminRow e={e} />;
  const { label, detail } = actionLabel(e);
  const runtime = encodeURIComponent(e.runtime);
  return (
    <tr data-testid="audit-row" className="align-top">
      <td className="whitespace-nowrap px-3 py-2 font-mono text-xs text-slate-700">
        <time dateTime={e.at}>{formatUtc(e.at).replace(" UTC", "")}</time>
      </td>
      <td className="max-w-[14rem] break-words px-3 py-2">{e.actor}</td>
      <td className="px-3 py-2">
        <div className="whitespace-nowrap font-medium">{label}</div>
        {detail ? <div className="text-xs text-slate-600">{detail}</div> : null}
      </td>
      <td className="max-w-[16rem] px-3 py-2">
        <Link
          href={`/invocations/${encodeURIComponent(e.invocation_id)}?runtime=${runtime}`}
          className="break-all font-mono text-xs text-indigo-700 underline-offset-2 hover:underline"
        >
          {e.invocation_id}
        </Link>
        <div className="text-xs text-slate-600">
          <span className="whitespace-nowrap">{e.tool}</span> · <span className="whitespace-nowrap">{e.runtime}</span>
        </div>
      </td>
      <td className="px-3 py-2">
        <Link
          href={`/tasks/${encodeURIComponent(e.task_id)}?runtime=${runtime}`}
          className="whitespace-nowrap font-mono text-xs text-slate-700 underline-offset-2 hover:underline"
        >
          {e.task_id}
        </Link>
      </td>
      <td className="px-3 py-2">
        {e.from_status === e.to_status ? (
          <span className="inline-flex flex-wrap items-center gap-1.5">
            <StatusBadge status={e.to_status} />
            <span className="text-xs text-slate-500">unchanged</span>
          </span>
        ) : (
          <span className="inline-flex flex-wrap items-center gap-1.5">
            <StatusBadge status={e.from_status} />
            <span aria-label="to" className="text-slate-500">
              →
            </span>
            <StatusBadge status={e.to_status} />
          </span>
        )}
      </td>
      <td className="max-w-md whitespace-pre-wrap break-words px-3 py-2 text-slate-800">
        {e.note ?? <span className="text-slate-400">—</span>}
      </td>
    </tr>
  );
}

function EmptyState({ filtered }: { filtered: boolean }) {
  if (filtered) {
    return (
      <div className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-700">
        No actions match these filters.{" "}
        <Link href="/audit" className="text-indigo-700 underline">
          Clear the filters
        </Link>{" "}
        to see the whole trail.
      </div>
    );
  }
  return (
    <div className="space-y-2 rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-700">
      <p className="font-medium text-slate-900">No actions yet.</p>
      <p>
        Every time a person acts on an invocation (requests verification, records what they found, marks it reconciled,
        escalates, approves, assigns or comments), it is written here: who, when, the status before and after, and their
        note or evidence. So is every admin change (people and roles, runtime keys, tokens, webhook endpoints,
        policies), with what it was before and after. Entries are never edited or deleted.
      </p>
      <p>
        Act from the{" "}
        <Link href="/" className="text-indigo-700 underline">
          queue
        </Link>
        , or script it with a{" "}
        <Link href="/account/tokens" className="text-indigo-700 underline">
          personal access token
        </Link>{" "}
        and <span className="font-mono">POST /api/v1/invocations/&#123;id&#125;/actions</span>.
      </p>
    </div>
  );
}

export function AuditView({
  initial,
  params,
  runtimes,
  invalid,
}: {
  initial: AuditPage;
  params: AuditParams;
  runtimes: string[];
  invalid: string | null;
}) {
  const query = useInfiniteQuery({
    queryKey: queryKeys.audit.list(params),
    queryFn: ({ pageParam }) =>
      api.get("/api/v1/audit", { query: { ...params, limit: PAGE_SIZE, cursor: pageParam || undefined } }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    initialData: { pages: [initial], pageParams: [null] },
    enabled: !invalid,
  });
  const entries = query.data.pages.flatMap((p) => p.items);
  const filtered = Object.keys(params).length > 0;

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h1 className="text-xl font-semibold">Audit trail</h1>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            Every action people took on invocations, and every admin change (people, keys, tokens, webhooks, policies),
            newest first. Append-only: nothing here is ever edited or deleted. Times are UTC.
          </p>
        </div>
        {invalid ? null : (
          <a
            href={withParams("/api/v1/audit", params, { format: "csv" })}
            download
            className="inline-flex items-center gap-1.5 rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-800 shadow-sm hover:bg-slate-50"
          >
            <Download aria-hidden="true" className="h-4 w-4" />
            Export CSV{filtered ? " (these filters)" : ""}
          </a>
        )}
      </div>
      <AuditFilters params={params} runtimes={runtimes} />
      {invalid ? (
        <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-800">
          These filters are not valid: {invalid}.{" "}
          <Link href="/audit" className="underline">
            Clear them
          </Link>
          .
        </p>
      ) : entries.length === 0 ? (
        <EmptyState filtered={filtered} />
      ) : (
        <>
          <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">Audit entries, newest first</caption>
              <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
                <tr>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Time (UTC)
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Actor
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Action
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Invocation
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Task
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Status change
                  </th>
                  <th scope="col" className="px-3 py-2 font-medium">
                    Note / evidence
                  </th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {entries.map((e) => (
                  <Row key={e.id} e={e} />
                ))}
              </tbody>
            </table>
          </div>
          <div className="flex items-center gap-3 text-sm text-slate-600">
            <span aria-live="polite">
              {entries.length} {entries.length === 1 ? "entry" : "entries"} shown
              {query.hasNextPage ? ", more are older" : ", that is all"}.
            </span>
            {query.hasNextPage ? (
              <Button onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
                {query.isFetchingNextPage ? "Loading…" : "Load older entries"}
              </Button>
            ) : null}
            {query.error ? (
              <span role="alert" className="text-rose-700">
                {errorText(query.error)}
              </span>
            ) : null}
          </div>
        </>
      )}
    </div>
  );
}
