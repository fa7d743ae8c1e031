"use client";

import { useId, useState, type FormEvent } from "react";
import { ApiClientError } from "@/lib/query/fetch";
import { queryKeys } from "@/lib/query/keys";
import type { Retention, RetentionInput, RetentionPeriod } from "@/lib/retention/settings";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCan } from "../current-user";
import { Button } from "../ui/button";
import { ErrorAlert, errorText } from "../ui/error-alert";
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
    <td className="px-3 py-2 align-top">
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
    </td>
  );
  return (
    <tr data-testid="retention-row" data-runtime={row.runtime} className="bg-indigo-50/50">
      <th scope="row" className="px-3 py-2 text-left align-top font-medium">
        {isDefault ? "Default (*)" : row.runtime}
      </th>
      {input(attempts, setAttempts, "Attempts kept")}
      {input(audit, setAudit, "Audit trail kept")}
      <td className="px-3 py-2 align-top text-xs text-slate-600">
        {isDefault || row.source === "own" ? "editing" : "saving gives it its own period"}
      </td>
      <td className="px-3 py-2 align-top">
        <form id={formId} onSubmit={submit} className="flex flex-wrap justify-end gap-2">
          <Button type="submit" size="sm" variant="primary" disabled={save.isPending}>
            {save.isPending ? "Saving…" : "Save"}
          </Button>
          <Button size="sm" onClick={() => onDone("")}>
            Cancel
          </Button>
          {!isDefault && row.source === "own" ? (
            <Button size="sm" variant="dangerGhost" onClick={() => reset.mutate()} disabled={reset.isPending}>
              Use the default
            </Button>
          ) : null}
        </form>
        {error ? (
          <p role="alert" className="mt-1 text-right text-xs text-rose-800">
            {error}
          </p>
        ) : null}
      </td>
    </tr>
  );
}

function Archives({ archives }: { archives: Retention["archives"] }) {
  if (archives.length === 0) {
    return (
      <p className="text-sm text-slate-500" data-testid="archives-empty">
        Nothing has left retention yet. Settle checks every quarter of an hour; a month&apos;s attempts leave once the
        month is over and its invocations settled longer ago than their period, archived first.
      </p>
    );
  }
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
      <table className="w-full text-left text-sm" data-testid="archives">
        <caption className="sr-only">Latest archives</caption>
        <thead className="bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
          <tr>
            {["Archive", "Month", "Rows", "State", "Finished"].map((h) => (
              <th key={h} scope="col" className="px-3 py-2 font-medium">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {archives.map((a) => (
            <tr key={a.name}>
              <td className="px-3 py-2 font-mono text-xs">{a.file ?? a.name}</td>
              <td className="px-3 py-2 tabular-nums">{a.shelf?.slice(0, 7) ?? "kept rows / audit trail"}</td>
              <td className="px-3 py-2 tabular-nums">{a.rows?.toLocaleString("en-US") ?? "–"}</td>
              <td className="px-3 py-2">
                {a.phase === "dropped" || a.phase === "deleted" ? "archived and removed" : `${a.phase}, resumes`}
              </td>
              <td className="px-3 py-2 tabular-nums">
                {a.finished_at ? formatUtc(a.finished_at, { seconds: false }) : "–"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function RetentionAdmin({ initial }: { initial: Retention }) {
  const canEdit = useCan("administer");
  const [editing, setEditing] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.retention,
    queryFn: () => api.get("/api/v1/retention"),
    initialData: initial,
  });
  const rows: Row[] = [{ runtime: DEFAULT, ...data.default }, ...data.runtimes];

  return (
    <section aria-labelledby="retention-heading" className="space-y-4">
      <div>
        <h1 id="retention-heading" className="text-xl font-semibold">
          Data retention
        </h1>
        <p className="mt-1 max-w-3xl text-sm text-slate-600">
          How long Settle keeps settled history. A settled invocation keeps its attempts — the envelopes and the
          arguments as sent — for <strong>attempts kept</strong> days after it settled, and its audit trail (actions,
          status changes, the guard&apos;s answers) for <strong>audit trail kept</strong> days. Whatever leaves is
          written to the archive first. Never removed, however old: an invocation that is not settled (unknown, stalled,
          verifying, awaiting a person), one with an open evidence conflict or review, and the metrics&apos; numbers. A
          runtime without its own period uses the default; the default decides when a month leaves whole, so give it the
          period most traffic needs (a runtime&apos;s own period is kept row by row).
        </p>
      </div>
      <p role="status" aria-live="polite" className="text-sm text-emerald-800">
        {notice}
      </p>
      <ErrorAlert error={error} prefix="Could not refresh:" />
      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
        <table className="w-full text-left text-sm">
          <caption className="sr-only">Retention per runtime</caption>
          <thead className="bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
            <tr>
              {["Runtime", "Attempts kept", "Audit trail kept", "Source"].map((h) => (
                <th key={h} scope="col" className="px-3 py-2 font-medium">
                  {h}
                </th>
              ))}
              <th scope="col" className="px-3 py-2 font-medium">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {rows.map((row) =>
              editing === row.runtime ? (
                <EditRow
                  key={row.runtime}
                  row={row}
                  onDone={(message) => {
                    setEditing(null);
                    setNotice(message || null);
                  }}
                />
              ) : (
                <tr key={row.runtime} data-testid="retention-row" data-runtime={row.runtime}>
                  <th scope="row" className="px-3 py-2 text-left font-medium">
                    {row.runtime === DEFAULT ? "Default (*)" : row.runtime}
                  </th>
                  <td className="px-3 py-2 tabular-nums">{row.attempts_days} days</td>
                  <td className="px-3 py-2 tabular-nums">{row.audit_days} days</td>
                  <td className="px-3 py-2 text-slate-600">
                    {sourceText(row, row.runtime === DEFAULT)}
                    {row.updated_by && row.updated_at && (row.source === "own" || row.runtime === DEFAULT) ? (
                      <span className="block text-xs text-slate-500">
                        changed by {row.updated_by}, {formatUtc(row.updated_at, { seconds: false })}
                      </span>
                    ) : null}
                  </td>
                  <td className="px-3 py-2 text-right">
                    {canEdit ? (
                      <Button
                        size="sm"
                        onClick={() => {
                          setNotice(null);
                          setEditing(row.runtime);
                        }}
                        aria-label={`Edit retention for ${row.runtime === DEFAULT ? "the default" : row.runtime}`}
                      >
                        Edit
                      </Button>
                    ) : null}
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      </div>
      {canEdit ? null : <p className="text-sm text-slate-600">Only admins change retention.</p>}
      <section aria-labelledby="archives-heading" className="space-y-2">
        <h2 id="archives-heading" className="text-sm font-semibold">
          Latest archives
        </h2>
        <Archives archives={data.archives} />
        <p className="text-xs text-slate-500">
          Files are gzipped JSON Lines with a manifest and SHA-256 checksums in the server&apos;s archive directory (
          <code>SETTLE_ARCHIVE_DIR</code>). <code>settle archive list</code> checks them;{" "}
          <code>settle archive restore &lt;file&gt; --into &lt;database&gt;</code> brings one back.
        </p>
      </section>
    </section>
  );
}
