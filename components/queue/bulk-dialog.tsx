"use client";

import { useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type FormEvent } from "react";
import type { BulkItemResult, BulkTarget } from "@/lib/queue/bulk-actions";
import { BULK_MAX_TARGETS } from "@/lib/queue/filters";
import type { OperatorAction } from "@/lib/outcome/actions";
import type { InvocationStatus } from "@/lib/outcome/status";
import { ApiClientError } from "@/lib/query/fetch";
import { queryKeys } from "@/lib/query/keys";
import { actionBody, ActionFields } from "../actions/action-dialog";
import { actionMeta } from "../actions/action-meta";
import { api } from "../api";
import { useCurrentUser } from "../current-user";
import { StatusBadge } from "../status-badge";
import { Button } from "../ui/button";
import { DataTable, type Column, type RowSpec } from "../ui/data-table";
import { Dialog, DialogActions } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import type { BulkChoice } from "./bulk-bar";
import { invocationHref } from "./filters";
import { InvocationId } from "../ui/invocation-id";

// One action on many invocations, sent in requests of at most 100, each item
// with the version the operator saw when they selected it. Afterwards, a
// result per item: what was done, what was refused and why.

type ItemResult = BulkItemResult & { outcome: "done" | "refused" | "unknown" | "not_sent" };

function why(r: ItemResult): string {
  if (r.outcome === "done") return "";
  if (r.outcome === "not_sent") return "Not sent: an earlier request failed. Nothing was done to it.";
  if (r.outcome === "unknown")
    return (
      r.message ??
      "The request failed on the way: it may or may not have been applied. Open it and check before acting again."
    );
  if (r.code === "VERSION_CONFLICT")
    return `Changed since you selected it (now version ${r.version ?? "?"}). Nothing was done; look at it and decide again.`;
  if (r.code === "TRANSITION_REFUSED") return "Not allowed in its current state.";
  return r.message ?? r.code ?? "Refused.";
}

const glyph = { done: "✓ Done", refused: "✕ Refused", unknown: "? Unknown", not_sent: "– Not sent" } as const;

const resultRow: RowSpec<ItemResult> = {
  key: (r) => `${r.runtime}\u0000${r.invocation_id}`,
  testId: "bulk-result",
  data: (r) => ({ "data-outcome": r.outcome }),
  top: true,
};
const resultColumns: Array<Column<ItemResult>> = [
  {
    header: "Result",
    width: "w-24",
    className: "nowrap font-medium",
    cell: (r) => (
      <span className={r.outcome === "done" ? "text-emerald-800" : "text-rose-800"}>{glyph[r.outcome]}</span>
    ),
  },
  {
    header: "Invocation",
    width: "w-44",
    className: "font-mono",
    cell: (r) => (
      <>
        <Link href={invocationHref(r.invocation_id, r.runtime)} className="block truncate hover:underline">
          <InvocationId id={r.invocation_id} short />
        </Link>
        <div className="truncate text-slate-500" title={r.runtime}>
          {r.runtime}
        </div>
      </>
    ),
  },
  {
    header: "Status now · why",
    className: "space-y-1 text-slate-700",
    cell: (r) => {
      const status = r.status as InvocationStatus | undefined; // the server names only statuses it has
      return (
        <>
          {status ? <StatusBadge status={status} /> : null}
          {r.outcome === "done" ? null : <p>{why(r)}</p>}
        </>
      );
    },
  },
];

export function BulkDialog({
  action,
  targets,
  onClose,
}: {
  action: BulkChoice;
  targets: BulkTarget[];
  onClose: (finished: boolean) => void;
}) {
  const me = useCurrentUser();
  const queryClient = useQueryClient();
  const [phase, setPhase] = useState<"form" | "running" | "done">("form");
  const [sent, setSent] = useState(0);
  const [results, setResults] = useState<ItemResult[]>([]);
  const [error, setError] = useState<string | null>(null);
  const meta = actionMeta[action];

  const run = async (body: OperatorAction) => {
    setError(null);
    setPhase("running");
    const collected: ItemResult[] = [];
    for (let i = 0; i < targets.length; i += BULK_MAX_TARGETS) {
      const chunk = targets.slice(i, i + BULK_MAX_TARGETS);
      try {
        const res = await api.post("/api/v1/bulk-actions", { body: { ...body, targets: chunk } });
        collected.push(
          ...res.results.map((r) => ({
            ...r,
            outcome: r.ok ? ("done" as const) : r.code === "INTERNAL" ? ("unknown" as const) : ("refused" as const),
          })),
        );
      } catch (e) {
        const refusedWhole = e instanceof ApiClientError && e.status >= 400 && e.status < 500;
        if (refusedWhole && i === 0) {
          // The request itself was refused (a missing reason, a role): nothing was applied.
          setError(e.message);
          setPhase("form");
          return;
        }
        const unknown = !refusedWhole;
        collected.push(
          ...chunk.map((t) => ({
            ...t,
            ok: false,
            outcome: unknown ? ("unknown" as const) : ("refused" as const),
            message: e instanceof Error ? e.message : undefined,
          })),
        );
        collected.push(
          ...targets.slice(i + BULK_MAX_TARGETS).map((t) => ({ ...t, ok: false, outcome: "not_sent" as const })),
        );
        break;
      } finally {
        setSent(Math.min(targets.length, i + chunk.length));
        setResults([...collected]);
      }
    }
    setPhase("done");
    void queryClient.invalidateQueries({ queryKey: queryKeys.invocations.all });
    void queryClient.invalidateQueries({ queryKey: queryKeys.tasks.all });
    void queryClient.invalidateQueries({ queryKey: queryKeys.audit.all });
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void run(actionBody(action, new FormData(event.currentTarget), me.email));
  };

  const count = (o: ItemResult["outcome"]) => results.filter((r) => r.outcome === o).length;
  const summary = [
    `${count("done")} done`,
    `${count("refused")} refused`,
    ...(count("unknown") ? [`${count("unknown")} unknown — check them`] : []),
    ...(count("not_sent") ? [`${count("not_sent")} not sent`] : []),
  ].join(" · ");
  const ordered = [...results].sort((a, b) => Number(a.outcome === "done") - Number(b.outcome === "done"));
  const n = targets.length;

  return (
    <Dialog
      open
      onOpenChange={(open) => (open || phase === "running" ? null : onClose(phase === "done"))}
      title={`${meta.label}: ${n} invocation${n === 1 ? "" : "s"}`}
      description={meta.help}
    >
      {phase === "form" ? (
        <form onSubmit={submit} className="space-y-4">
          <ActionFields action={action} />
          <p className="text-xs text-slate-600">
            Each one is acted on with the version you saw when you selected it. Any that changed since, or whose state
            does not allow this, is refused and listed — never overwritten. The rest still go ahead.
          </p>
          <ErrorAlert error={error} look="box" />
          <DialogActions label={`${meta.label} ${n}`} onCancel={() => onClose(false)} />
        </form>
      ) : (
        <div className="space-y-4">
          <div>
            <label htmlFor="bulk-progress" className="text-sm text-slate-700">
              {phase === "running" ? `Sending… ${sent} of ${n}` : `Sent ${sent} of ${n}`}
            </label>
            <progress
              id="bulk-progress"
              value={sent}
              max={n}
              className="mt-1 h-2 w-full overflow-hidden rounded accent-slate-900"
            />
          </div>
          <p role="status" className="text-sm font-medium" data-testid="bulk-summary">
            {summary}
          </p>
          {results.length > 0 ? (
            <DataTable
              caption="Result per invocation"
              columns={resultColumns}
              rows={ordered}
              row={resultRow}
              size="compact"
              scroll
            />
          ) : null}
          <div className="flex justify-end">
            <Button variant="primary" disabled={phase === "running"} onClick={() => onClose(true)}>
              {phase === "running" ? "Working…" : "Done"}
            </Button>
          </div>
        </div>
      )}
    </Dialog>
  );
}
