"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { Download } from "lucide-react";
import Link from "next/link";
import type { AuditEntry, AuditPage } from "@/lib/audit/audit";
import { invocationHref, taskHref } from "@/lib/invocations/links";
import { queryKeys } from "@/lib/query/keys";
import { ActionExtras } from "../actions/action-extras";
import { entryActionName } from "../timeline/event-text";
import { api } from "../api";
import { StatusChange } from "../status-badge";
import { Button } from "../ui/button";
import { Cell, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { ErrorAlert } from "../ui/error-alert";
import { EmptyState } from "../ui/page";
import { AuditFilters } from "./audit-filters";
import { withParams, type AuditParams } from "./params";
import { formatUtc } from "./time";
import { stringifyExactJson } from "@/lib/json/exact";
import { InvocationId } from "../ui/invocation-id";

const PAGE_SIZE = 50;

function actionLabel(e: AuditEntry): { label: string; detail: string | null } {
  const label = entryActionName({ action: e.action, edit: e.edit });
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
  const show = (v: unknown) =>
    v === undefined || v === null ? "—" : typeof v === "string" ? v : stringifyExactJson(v);
  const changed = keys.filter((k) => stringifyExactJson(e.before?.[k]) !== stringifyExactJson(e.after?.[k]));
  if (!e.before) return keys.map((k) => `${k}: ${show(e.after?.[k])}`).join(", ");
  if (!e.after) return `removed (${keys.map((k) => `${k}: ${show(e.before?.[k])}`).join(", ")})`;
  return changed.map((k) => `${k}: ${show(e.before?.[k])} → ${show(e.after?.[k])}`).join(", ") || "no change";
}

const when = (e: AuditEntry) => <time dateTime={e.at}>{formatUtc(e.at).replace(" UTC", "")}</time>;

/** An operator's action on an invocation; anything else (an admin change) is drawn by AdminRow. */
const isAction = (e: AuditEntry) =>
  e.kind !== "admin" && e.invocation_id && e.task_id && e.runtime && e.from_status && e.to_status;

/** An admin change: when, who and what as an action's row, then its target and its change across the rest. */
function AdminRow({ e }: { e: AuditEntry }) {
  return (
    <tr data-testid="audit-row" data-kind="admin" className="align-top">
      {columns.slice(0, 3).map((c) => (
        <Cell key={c.header} size="dense" className={c.className}>
          {c.cell(e)}
        </Cell>
      ))}
      <Cell size="dense" colSpan={2} className="max-w-[16rem]">
        <span className="break-all font-mono text-xs text-slate-800">{e.target_id}</span>
        <div className="text-xs text-slate-600">{e.target_type?.replaceAll("_", " ")}</div>
      </Cell>
      <Cell size="dense" colSpan={2} className="max-w-md whitespace-pre-wrap break-words text-slate-800">
        {changeText(e)}
      </Cell>
    </tr>
  );
}

const columns: Array<Column<AuditEntry>> = [
  { header: "Time (UTC)", className: "nowrap font-mono text-xs text-slate-700", cell: when },
  { header: "Actor", className: "max-w-[14rem] break-words", cell: (e) => e.actor },
  {
    header: "Action",
    cell: (e) => {
      const { label, detail } = isAction(e) ? actionLabel(e) : { label: human(e.action), detail: "admin" };
      return (
        <>
          <div className="whitespace-nowrap font-medium">{label}</div>
          {detail ? <div className="text-xs text-slate-600">{detail}</div> : null}
        </>
      );
    },
  },
  {
    header: "Invocation",
    className: "max-w-[16rem]",
    cell: (e) => (
      <>
        <Link
          href={invocationHref(e.invocation_id!, e.runtime!)}
          className="font-mono text-xs text-indigo-700 underline-offset-2 hover:underline"
        >
          <InvocationId id={e.invocation_id!} />
        </Link>
        <div className="text-xs text-slate-600">
          <span className="whitespace-nowrap">{e.tool}</span> · <span className="whitespace-nowrap">{e.runtime}</span>
        </div>
      </>
    ),
  },
  {
    header: "Task",
    cell: (e) => (
      <Link
        href={taskHref(e.task_id!, e.runtime!)}
        className="whitespace-nowrap font-mono text-xs text-slate-700 underline-offset-2 hover:underline"
      >
        {e.task_id}
      </Link>
    ),
  },
  { header: "Status change", cell: (e) => <StatusChange from={e.from_status!} to={e.to_status!} /> },
  {
    header: "Note / evidence",
    className: "max-w-md break-words text-slate-800",
    cell: (e) => (
      <>
        {e.note ? (
          <p className="whitespace-pre-wrap">{e.note}</p>
        ) : e.edit || e.reply ? null : (
          <span className="text-slate-400">—</span>
        )}
        <ActionExtras entry={e} />
      </>
    ),
  },
];

const auditRow: RowSpec<AuditEntry> = {
  key: (e) => e.id,
  testId: "audit-row",
  top: true,
  render: (e) => (isAction(e) ? undefined : <AdminRow e={e} />),
};

function NoEntries({ filtered }: { filtered: boolean }) {
  if (filtered) {
    return (
      <EmptyState>
        <p>
          No actions match these filters.{" "}
          <Link href="/audit" className="text-indigo-700 underline">
            Clear the filters
          </Link>{" "}
          to see the whole trail.
        </p>
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No actions yet.">
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
    </EmptyState>
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
      ) : (
        <DataTable
          caption="Audit entries, newest first"
          columns={columns}
          rows={entries}
          row={auditRow}
          size="dense"
          empty={<NoEntries filtered={filtered} />}
          footer={
            <>
              <span aria-live="polite">
                {entries.length} {entries.length === 1 ? "entry" : "entries"} shown
                {query.hasNextPage ? ", more are older" : ", that is all"}.
              </span>
              {query.hasNextPage ? (
                <Button onClick={() => void query.fetchNextPage()} disabled={query.isFetchingNextPage}>
                  {query.isFetchingNextPage ? "Loading…" : "Load older entries"}
                </Button>
              ) : null}
              <ErrorAlert error={query.error} />
            </>
          }
        />
      )}
    </div>
  );
}
