"use client";

import Link from "next/link";
import { useState } from "react";
import type { WebhookEndpointInfo } from "@/lib/webhooks/endpoints";
import { queryKeys } from "@/lib/query/keys";
import { ShownOnceDialog } from "../admin/shown-once";
import { useCollection } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { actionsColumn, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { DialogButton } from "../ui/dialog";
import { EmptyState, PageSection, StateLabel } from "../ui/page";
import { CreateEndpointDialog, type Created } from "./create-endpoint";
import { EditHeadersButton, headersNotice } from "./edit-headers";
import { VerifyHelp } from "./verify-help";

export const SECRET_NOTE =
  "Copy it now. Settle keeps it to sign deliveries but will not show it again; rotating it gives a new one.";

/** OTLP exports are not signed (the collector checks its own headers): only a webhook has a secret. */
export const isSigned = (endpoint: Pick<WebhookEndpointInfo, "kind">) => endpoint.kind !== "otlp";

export function EndpointState({ enabled }: { enabled: boolean }) {
  return enabled ? <StateLabel state="enabled" /> : <StateLabel state="disabled" />;
}

/** Delivered, pending and failed (failures stand out), of webhook deliveries or notification messages. */
export function OutboxCounts({
  counts,
  sentWord = "delivered",
}: {
  counts: { delivered: number; pending: number; failed: number };
  sentWord?: string;
}) {
  const { pending, delivered, failed } = counts;
  return (
    <span className="whitespace-nowrap">
      {delivered} {sentWord} · {pending} pending ·{" "}
      <span className={failed > 0 ? "font-semibold text-rose-700" : ""}>
        {failed > 0 ? <span aria-hidden="true">✕ </span> : null}
        {failed} failed
      </span>
    </span>
  );
}

const endpointRow: RowSpec<WebhookEndpointInfo> = {
  key: (e) => e.id,
  testId: "webhook-row",
  dimmed: (e) => !e.enabled,
};
const infoColumns: Array<Column<WebhookEndpointInfo>> = [
  { header: "Runtime", className: "font-medium", cell: (e) => e.runtime },
  { header: "Kind", className: "nowrap", cell: (e) => (e.kind === "otlp" ? "OTLP traces" : "Webhook") },
  {
    header: "URL",
    className: "max-w-sm truncate mono",
    cell: (e) => <span title={e.url}>{e.url}</span>,
  },
  { header: "State", className: "nowrap", cell: (e) => <EndpointState enabled={e.enabled} /> },
  { header: "Deliveries", cell: (e) => <OutboxCounts counts={e.deliveries} /> },
  {
    header: "Last try",
    className: "nowrap",
    cell: (e) =>
      e.last_attempt_at ? `${formatUtc(e.last_attempt_at)} · ${e.last_status_code ?? "no answer"}` : "never",
  },
];

export function WebhooksAdmin({ initial, runtimes }: { initial: WebhookEndpointInfo[]; runtimes: string[] }) {
  const [created, setCreated] = useState<Created | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.webhooks,
    queryFn: () => api.get("/api/v1/admin/webhooks"),
    initialData: { items: initial },
    refetchInterval: 5000,
  });
  const columns = [
    ...infoColumns,
    actionsColumn<WebhookEndpointInfo>((e) => (
      <>
        {isSigned(e) ? null : <EditHeadersButton endpoint={e} onDone={(saved) => setNotice(headersNotice(saved))} />}
        <Link
          href={`/admin/webhooks/${e.id}`}
          className="whitespace-nowrap text-sm font-medium text-slate-900 underline underline-offset-2 hover:text-slate-700"
        >
          Delivery log<span className="sr-only"> for {e.url}</span>
        </Link>
      </>
    )),
  ];

  return (
    <PageSection
      id="webhooks-heading"
      title="Webhooks"
      description={
        <>
          Settle tells a runtime when one of its invocations settles (
          <span className="font-mono">invocation.settled</span>) or what it may do next changes (
          <span className="font-mono">invocation.decision_changed</span>), so agents need not poll. Every webhook
          delivery is signed, kept in an outbox and retried with exponential back-off until the receiver answers 2xx. An
          OTLP destination gets each settled or escalated call as a span in the team&apos;s own traces, through the same
          outbox, sent with the headers you give it instead of a signature.
        </>
      }
      action={
        <DialogButton<Created>
          variant="primary"
          disabled={runtimes.length === 0}
          dialog={(props) => <CreateEndpointDialog runtimes={runtimes} {...props} />}
          onDone={(made) => {
            setNotice(null);
            setCreated(isSigned(made.endpoint) ? made : null);
          }}
        >
          Add endpoint
        </DialogButton>
      }
      notice={notice}
    >
      <DataTable
        caption="Webhook endpoints"
        columns={columns}
        rows={data.items}
        row={endpointRow}
        error={error}
        empty={
          <EmptyState title="No webhook endpoints yet">
            <p>
              {runtimes.length === 0
                ? "There is no runtime yet: create a runtime key first (Runtime keys), then add its endpoint here."
                : "Add an endpoint for a runtime: you get a signing secret once. Before you trust an event, check its signature like this:"}
            </p>
            <VerifyHelp />
          </EmptyState>
        }
      />
      {/* Only a webhook's deliveries carry a signature to check. */}
      {data.items.some(isSigned) ? (
        <details className="rounded-lg border border-slate-200 bg-white p-4">
          <summary className="cursor-pointer text-sm font-medium">
            How a receiver checks that an event came from Settle
          </summary>
          <div className="mt-3">
            <VerifyHelp />
          </div>
        </details>
      ) : null}

      {created ? (
        <ShownOnceDialog
          title={`Signing secret for ${created.endpoint.runtime}`}
          label="Webhook signing secret"
          secret={created.secret}
          note={SECRET_NOTE}
          onClose={() => setCreated(null)}
        >
          <p className="text-sm text-slate-700">
            Give it to the receiver at <span className="break-all font-mono">{created.endpoint.url}</span> (for example
            as <span className="font-mono">SETTLE_WEBHOOK_SECRET</span>) and verify{" "}
            <span className="font-mono">Settle-Signature</span> on every request.
          </p>
        </ShownOnceDialog>
      ) : null}
    </PageSection>
  );
}
