"use client";

import Link from "next/link";
import { useState, type FormEvent } from "react";
import type { WebhookEndpointInfo } from "@/lib/webhooks/endpoints";
import { queryKeys } from "@/lib/query/keys";
import { ShownOnceDialog } from "../admin/shown-once";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { SelectField, TextField } from "../ui/field";
import { VerifyHelp } from "./verify-help";

type Created = { endpoint: WebhookEndpointInfo; secret: string };

export const SECRET_NOTE =
  "Copy it now. Settle keeps it to sign deliveries but will not show it again; rotating it gives a new one.";

function CreateEndpointDialog({
  runtimes,
  onClose,
  onCreated,
}: {
  runtimes: string[];
  onClose: () => void;
  onCreated: (created: Created) => void;
}) {
  const create = useCollectionMutation(queryKeys.admin.webhooks, {
    mutationFn: (body: { runtime: string; url: string }) => api.post("/api/v1/admin/webhooks", { body }),
    onSuccess: onCreated,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    create.mutate({ runtime: String(form.get("runtime") ?? ""), url: String(form.get("url") ?? "").trim() });
  };
  return (
    <Dialog
      open
      onOpenChange={(open) => (open ? null : onClose())}
      title="Add a webhook endpoint"
      description="Settle POSTs a signed event to this URL whenever one of the runtime's invocations settles or its decision changes."
    >
      <form onSubmit={submit} className="space-y-4">
        <SelectField label="Runtime" name="runtime" required options={runtimes.map((r) => ({ value: r, label: r }))} />
        <TextField
          label="URL"
          name="url"
          type="url"
          required
          placeholder="https://agent.example.com/settle-events"
          autoComplete="off"
          hint="http:// or https:// at a public address (not localhost or a private network). The receiver answers any 2xx within 10 seconds."
        />
        <ErrorAlert error={create.error} look="box" />
        <DialogActions label="Add endpoint" pendingLabel="Adding…" pending={create.isPending} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

export function EndpointState({ enabled }: { enabled: boolean }) {
  return enabled ? (
    <span className="inline-flex items-center gap-1 text-emerald-800">
      <span aria-hidden="true">●</span>Enabled
    </span>
  ) : (
    <span className="inline-flex items-center gap-1 text-slate-600">
      <span aria-hidden="true">⏸</span>Disabled
    </span>
  );
}

function Counts({ e }: { e: WebhookEndpointInfo }) {
  const { pending, delivered, failed } = e.deliveries;
  return (
    <span className="whitespace-nowrap">
      {delivered} delivered · {pending} pending ·{" "}
      <span className={failed > 0 ? "font-semibold text-rose-700" : ""}>
        {failed > 0 ? <span aria-hidden="true">✕ </span> : null}
        {failed} failed
      </span>
    </span>
  );
}

export function WebhooksAdmin({ initial, runtimes }: { initial: WebhookEndpointInfo[]; runtimes: string[] }) {
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.webhooks,
    queryFn: () => api.get("/api/v1/admin/webhooks"),
    initialData: { items: initial },
    refetchInterval: 5000,
  });
  const endpoints = data.items;

  return (
    <section aria-labelledby="webhooks-heading" className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h1 id="webhooks-heading" className="text-xl font-semibold">
            Webhooks
          </h1>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            Settle tells a runtime when one of its invocations settles (
            <span className="font-mono">invocation.settled</span>) or what it may do next changes (
            <span className="font-mono">invocation.decision_changed</span>), so agents need not poll. Every delivery is
            signed, kept in an outbox and retried with exponential back-off until the receiver answers 2xx.
          </p>
        </div>
        <Button variant="primary" onClick={() => setCreating(true)} disabled={runtimes.length === 0}>
          Add endpoint
        </Button>
      </div>
      <ErrorAlert error={error} prefix="Could not refresh the list:" />

      {endpoints.length === 0 ? (
        <div className="space-y-4 rounded-lg border border-dashed border-slate-300 bg-white p-6">
          <h2 className="text-base font-semibold">No webhook endpoints yet</h2>
          <p className="text-sm text-slate-700">
            {runtimes.length === 0
              ? "There is no runtime yet: create a runtime key first (Runtime keys), then add its endpoint here."
              : "Add an endpoint for a runtime: you get a signing secret once. Before you trust an event, check its signature like this:"}
          </p>
          <VerifyHelp />
        </div>
      ) : (
        <>
          <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
            <table className="w-full text-left text-sm">
              <caption className="sr-only">Webhook endpoints</caption>
              <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
                <tr>
                  <th scope="col" className="px-4 py-2 font-medium">
                    Runtime
                  </th>
                  <th scope="col" className="px-4 py-2 font-medium">
                    URL
                  </th>
                  <th scope="col" className="px-4 py-2 font-medium">
                    State
                  </th>
                  <th scope="col" className="px-4 py-2 font-medium">
                    Deliveries
                  </th>
                  <th scope="col" className="px-4 py-2 font-medium">
                    Last try
                  </th>
                  <th scope="col" className="px-4 py-2 font-medium">
                    <span className="sr-only">Delivery log</span>
                  </th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {endpoints.map((e) => (
                  <tr key={e.id} data-testid="webhook-row" className={e.enabled ? "" : "bg-slate-50 text-slate-500"}>
                    <td className="px-4 py-2 font-medium">{e.runtime}</td>
                    <td className="max-w-sm truncate px-4 py-2 font-mono text-xs" title={e.url}>
                      {e.url}
                    </td>
                    <td className="whitespace-nowrap px-4 py-2">
                      <EndpointState enabled={e.enabled} />
                    </td>
                    <td className="px-4 py-2">
                      <Counts e={e} />
                    </td>
                    <td className="whitespace-nowrap px-4 py-2">
                      {e.last_attempt_at
                        ? `${formatUtc(e.last_attempt_at)} · ${e.last_status_code ?? "no answer"}`
                        : "never"}
                    </td>
                    <td className="px-4 py-2 text-right">
                      <Link
                        href={`/admin/webhooks/${e.id}`}
                        className="whitespace-nowrap text-sm font-medium text-slate-900 underline underline-offset-2 hover:text-slate-700"
                      >
                        Delivery log<span className="sr-only"> for {e.url}</span>
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <details className="rounded-lg border border-slate-200 bg-white p-4">
            <summary className="cursor-pointer text-sm font-medium">
              How a receiver checks that an event came from Settle
            </summary>
            <div className="mt-3">
              <VerifyHelp />
            </div>
          </details>
        </>
      )}

      {creating ? (
        <CreateEndpointDialog
          runtimes={runtimes}
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false);
            setCreated(c);
          }}
        />
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
    </section>
  );
}
