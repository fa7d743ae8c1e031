"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import type { WebhookEndpointInfo } from "@/lib/webhooks/endpoints";
import { queryKeys } from "@/lib/query/keys";
import { ShownOnceDialog } from "../admin/shown-once";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { Button } from "../ui/button";
import { ConfirmButton } from "../ui/confirm";
import { Breadcrumb } from "../ui/page";
import { ErrorAlert } from "../ui/error-alert";
import { DeliveryLog } from "./delivery-log";
import { EditHeadersButton } from "./edit-headers";
import { EndpointState, isSigned, SECRET_NOTE } from "./webhooks-admin";

// One endpoint: enable / disable, rotate its secret (a webhook) or edit its headers (OTLP), delete it, and its
// delivery log.

export function EndpointAdmin({ initial }: { initial: WebhookEndpointInfo }) {
  const router = useRouter();
  const [secret, setSecret] = useState<string | null>(null);
  const { data: endpoint } = useCollection({
    queryKey: queryKeys.admin.webhookEndpoint(initial.id),
    queryFn: () => api.get("/api/v1/admin/webhooks/{endpoint_id}", { params: { endpoint_id: initial.id } }),
    initialData: initial,
    refetchInterval: 5000,
  });
  const params = { endpoint_id: endpoint.id };
  // Every change refreshes all of webhooks: this endpoint, its log and the list it is in.
  const toggle = useCollectionMutation(queryKeys.admin.webhooks, {
    mutationFn: (enabled: boolean) => api.patch("/api/v1/admin/webhooks/{endpoint_id}", { params, body: { enabled } }),
  });
  const rotate = useCollectionMutation(queryKeys.admin.webhooks, {
    mutationFn: () => api.post("/api/v1/admin/webhooks/{endpoint_id}/rotate-secret", { params }),
  });
  const remove = useCollectionMutation(queryKeys.admin.webhooks, {
    mutationFn: () => api.delete("/api/v1/admin/webhooks/{endpoint_id}", { params }),
    onSuccess: () => router.push("/admin/webhooks"),
  });

  return (
    <div className="space-y-6">
      <Breadcrumb trail={[{ href: "/admin/webhooks", label: "Webhooks" }]} current={endpoint.runtime} />
      <section
        aria-labelledby="endpoint-heading"
        className="space-y-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm"
      >
        <div className="flex flex-wrap items-start justify-between gap-4">
          <div className="min-w-0">
            <h1 id="endpoint-heading" className="text-xl font-semibold">
              {endpoint.kind === "otlp" ? "OTLP traces" : "Webhook"} for {endpoint.runtime}
            </h1>
            <p className="mt-1 break-all font-mono text-sm text-slate-700">{endpoint.url}</p>
            {endpoint.kind === "otlp" ? (
              <p className="mt-1 text-sm text-slate-600" data-testid="otlp-endpoint">
                Each settled or escalated call is exported here as an OpenTelemetry span
                {endpoint.header_names.length > 0 ? `, with the headers ${endpoint.header_names.join(", ")}` : ""}.
              </p>
            ) : null}
            <p className="mt-1 text-sm text-slate-600">
              <EndpointState enabled={endpoint.enabled} /> · added {formatUtc(endpoint.created_at, { seconds: false })}{" "}
              · {endpoint.deliveries.delivered} delivered, {endpoint.deliveries.pending} pending,{" "}
              {endpoint.deliveries.failed} failed
            </p>
          </div>
          <div className="flex flex-wrap gap-2">
            <Button onClick={() => toggle.mutate(!endpoint.enabled)} disabled={toggle.isPending}>
              {endpoint.enabled ? "Disable" : "Enable"}
            </Button>
            {/* OTLP exports are not signed (the collector checks its own headers): no secret to rotate. */}
            {isSigned(endpoint) ? (
              <ConfirmButton
                variant="secondary"
                title="Rotate the signing secret?"
                description="Every delivery from now on, retries included, is signed with the new secret; the old one stops verifying at once. Update the receiver right after."
                confirmLabel="Rotate secret"
                step={rotate}
                act={() => rotate.mutateAsync().then((answer) => setSecret(answer.secret))}
              >
                Rotate secret
              </ConfirmButton>
            ) : (
              <EditHeadersButton endpoint={endpoint} size="md" />
            )}
            <ConfirmButton
              title="Delete this endpoint?"
              description={`${endpoint.runtime} stops getting events at ${endpoint.url}, and its delivery log is deleted with it. This cannot be undone.`}
              confirmLabel="Delete endpoint"
              step={remove}
              act={() => remove.mutateAsync()}
            >
              Delete
            </ConfirmButton>
          </div>
        </div>
        {!endpoint.enabled ? (
          <p className="text-sm text-slate-700">
            Disabled: no new events are queued for it, and its pending deliveries wait until it is enabled again.
          </p>
        ) : null}
        <ErrorAlert error={toggle.error} />
      </section>

      <DeliveryLog source={{ kind: "endpoint", id: endpoint.id, runtime: endpoint.runtime }} />

      {secret ? (
        <ShownOnceDialog
          title={`New signing secret for ${endpoint.runtime}`}
          label="Webhook signing secret"
          secret={secret}
          note={SECRET_NOTE}
          onClose={() => setSecret(null)}
        />
      ) : null}
    </div>
  );
}
