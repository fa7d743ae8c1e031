"use client";

import { useId, useState, type FormEvent } from "react";
import { ApiClientError } from "@/lib/query/fetch";
import { queryKeys } from "@/lib/query/keys";
import type { Retention, RetentionInput, RetentionPeriod } from "@/lib/retention/settings";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCan } from "../current-user";
import { Cell, DataTable, rowLook, type Column } from "../ui/data-table";
import { errorText } from "../ui/error-alert";
import { PageSection, Subsection } from "../ui/page";
import { RowEditActions, useRowEdit } from "../ui/row-edit";
import { useCollection, useCollectionMutation } from "./use-collection";

// Admin → Data retention: how long settled history is kept, the default and each runtime's own period, and
// what retention archived lately. Everyone signed in reads it (it answers "how long do you keep tool
// arguments?"); admins edit it. The server validates again and its message lands under the row.

type Row = RetentionPeriod & { runtime: string };
const DEFAULT = "*";

const sourceText = (p: RetentionPeriod, isDefault: boolean) =>
  p.source === "own"
    ? "own period"
    : isDefault
      ? p.source === "built_in"
        ? "built-in (nothing set)"
        : "set"
      : "uses the default";

function EditRow({ row, onDone }: { row: Row; onDone: (message: string) => void }) {
  const formId = useId();
  const [attempts, setAttempts] = useState(String(row.attempts_days));
  const [audit, setAudit] = useState(String(row.audit_days));
  const [error, setError] = useState<string | null>(null);
  const isDefault = row.runtime === DEFAULT;
  const label = isDefault ? "the default" : row.runtime;
  const save = useCollectionMutation(queryKeys.retention, {
    mutationFn: (body: RetentionInput) =>
      isDefault
        ? api.put("/api/v1/retention", { body })
        : api.put("/api/v1/retention/runtimes/{runtime}", { params: { runtime: row.runtime }, body }),
    onSuccess: () => onDone(`Saved ${label}'s retention.`),
    onError: (e) => setError(e instanceof ApiClientError ? e.message : (errorText(e) ?? "Saving failed.")),
  });
  const reset = useCollectionMutation(queryKeys.retention, {
    mutationFn: () => api.delete("/api/v1/retention/runtimes/{runtime}", { params: { runtime: row.runtime } }),
    onSuccess: () => onDone(`${row.runtime} uses the default retention again.`),
    onError: (e) => setError(errorText(e) ?? "Failed."),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const body = { attempts_days: Number(attempts), audit_days: Number(audit) };
    if (![body.attempts_days, body.audit_days].every((n) => Number.isInteger(n) && n >= 1)) {
      setError("Each period is a whole number of days, from 1.");
      return;
    }
    setError(null);
    save.mutate(body);
  };
  const input = (value: string, set: (v: string) => void, what: string) => (
    <Cell>
      <label className="sr-only" htmlFor={`${formId}-${what}`}>{`${what} (${label})`}</label>
      <input
        id={`${formId}-${what}`}
        form={formId}
        value={value}
        inputMode="numeric"
        onChange={(e) => set(e.target.value)}
        aria-invalid={error ? true : undefined}
        className={`w-24 rounded-md border px-2 py-1 text-sm shadow-sm ${error ? "border-rose-600" : "border-slate-300"}`}
      />
      <span className="ml-1 text-xs text-slate-500">days</span>
    </Cell>
  );
  return (
    <tr data-testid="retention-row" data-runtime={row.runtime} className={`align-top ${rowLook.editing}`}>
      <Cell rowHeader>{isDefault ? "Default (*)" : row.runtime}</Cell>
      {input(attempts, setAttempts, "Attempts kept")}
      {input(audit, setAudit, "Audit trail kept")}
      <RowEditActions
        formId={formId}
        onSubmit={submit}
        saving={save}
        onCancel={() => onDone("")}
        what={isDefault || row.source === "own" ? "editing" : "saving gives it its own period"}
        reset={!isDefault && row.source === "own" ? { label: "Use the default", step: reset } : null}
        error={error}
      />
    </tr>
  );
}

type Archive = Retention["archives"][number];
const archiveColumns: Array<Column<Archive>> = [
  { header: "Archive", className: "mono", cell: (a) => a.file ?? a.name },
  { header: "Month", className: "tabular-nums", cell: (a) => a.shelf?.slice(0, 7) ?? "kept rows / audit trail" },
  { header: "Rows", className: "tabular-nums", cell: (a) => a.rows?.toLocaleString("en-US") ?? "–" },
  {
    header: "State",
    cell: (a) => (a.phase === "dropped" || a.phase === "deleted" ? "archived and removed" : `${a.phase}, resumes`),
  },
  {
    header: "Finished",
    className: "tabular-nums",
    cell: (a) => (a.finished_at ? formatUtc(a.finished_at, { seconds: false }) : "–"),
  },
];

export function RetentionAdmin({ initial }: { initial: Retention }) {
  const canEdit = useCan("administer");
  const edit = useRowEdit<Row>((row) => row.runtime, canEdit);
  const { data, error } = useCollection({
    queryKey: queryKeys.retention,
    queryFn: () => api.get("/api/v1/retention"),
    initialData: initial,
  });
  const rows: Row[] = [{ runtime: DEFAULT, ...data.default }, ...data.runtimes];
  const columns: Array<Column<Row>> = [
    { header: "Runtime", rowHeader: true, cell: (row) => (row.runtime === DEFAULT ? "Default (*)" : row.runtime) },
    { header: "Attempts kept", className: "tabular-nums", cell: (row) => `${row.attempts_days} days` },
    { header: "Audit trail kept", className: "tabular-nums", cell: (row) => `${row.audit_days} days` },
    {
      header: "Source",
      className: "text-slate-600",
      cell: (row) => (
        <>
          {sourceText(row, row.runtime === DEFAULT)}
          {row.updated_by && row.updated_at && (row.source === "own" || row.runtime === DEFAULT) ? (
            <span className="block text-xs text-slate-500">
              changed by {row.updated_by}, {formatUtc(row.updated_at, { seconds: false })}
            </span>
          ) : null}
        </>
      ),
    },
    edit.column((row) => `Edit retention for ${row.runtime === DEFAULT ? "the default" : row.runtime}`),
  ];

  return (
    <PageSection
      id="retention-heading"
      title="Data retention"
      description={
        <>
          How long Settle keeps settled history. A settled invocation keeps its attempts — the envelopes and the
          arguments as sent — for <strong>attempts kept</strong> days after it settled, and its audit trail (actions,
          status changes, the guard&apos;s answers) for <strong>audit trail kept</strong> days. Whatever leaves is
          written to the archive first. Never removed, however old: an invocation that is not settled (unknown, stalled,
          verifying, awaiting a person), one with an open evidence conflict or review, and the metrics&apos; numbers. A
          runtime without its own period uses the default; the default decides when a month leaves whole, so give it the
          period most traffic needs (a runtime&apos;s own period is kept row by row).
        </>
      }
      notice={edit.notice}
    >
      <DataTable
        caption="Retention per runtime"
        columns={columns}
        rows={rows}
        row={{
          key: (row) => row.runtime,
          testId: "retention-row",
          data: (row) => ({ "data-runtime": row.runtime }),
          render: edit.render((row, done) => <EditRow row={row} onDone={done} />),
        }}
        error={error}
      />
      {canEdit ? null : <p className="text-sm text-slate-600">Only admins change retention.</p>}
      <Subsection id="archives-heading" title="Latest archives">
        <DataTable
          caption="Latest archives"
          columns={archiveColumns}
          rows={data.archives}
          row={{ key: (a) => a.name }}
          empty={
            <p className="text-sm text-slate-500" data-testid="archives-empty">
              Nothing has left retention yet. Settle checks every quarter of an hour; a month&apos;s attempts leave once
              the month is over and its invocations settled longer ago than their period, archived first.
            </p>
          }
        />
        <p className="text-xs text-slate-500">
          Files are gzipped JSON Lines with a manifest and SHA-256 checksums in the server&apos;s archive directory (
          <code>SETTLE_ARCHIVE_DIR</code>). <code>settle archive list</code> checks them;{" "}
          <code>settle archive restore &lt;file&gt; --into &lt;database&gt;</code> brings one back.
        </p>
      </Subsection>
    </PageSection>
  );
}
