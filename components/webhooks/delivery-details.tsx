"use client";

import { useQuery } from "@tanstack/react-query";
import type { WebhookDeliveryDetail } from "@/lib/webhooks/deliveries";
import { formatUtc } from "../audit/time";
import { DataTable, type Column } from "../ui/data-table";
import { ErrorAlert } from "../ui/error-alert";
import { deliverySource, type DeliverySource } from "./delivery-source";
import { stringifyExactJson } from "@/lib/json/exact";

// One delivery opened in the log: every try (newest first) and the body as sent.

type Attempt = WebhookDeliveryDetail["attempts"][number];

const attemptColumns: Array<Column<Attempt>> = [
  { header: "At", className: "nowrap", cell: (a) => formatUtc(a.at) },
  { header: "Status", className: "nowrap font-mono", cell: (a) => a.status_code ?? "no answer" },
  { header: "Took", className: "nowrap", cell: (a) => `${a.duration_ms} ms` },
  { header: "Error", className: "break-all text-slate-700", cell: (a) => a.error ?? "" },
];

export function DeliveryDetails({ source, deliveryId }: { source: DeliverySource; deliveryId: string }) {
  const from = deliverySource(source);
  const { data, error, isPending } = useQuery({
    queryKey: from.itemKey(deliveryId),
    queryFn: () => from.get(deliveryId),
    refetchInterval: 5000,
  });
  if (isPending) return <p className="text-sm text-slate-600">Loading…</p>;
  if (error) return <ErrorAlert error={error} />;
  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <div>
        <h3 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">Attempts</h3>
        {data.attempts.length === 0 ? (
          <p className="text-sm text-slate-600">Not tried yet.</p>
        ) : (
          <DataTable
            caption={`Attempts of delivery ${data.delivery.event_id}`}
            bodyTestId="attempt-rows"
            columns={attemptColumns}
            rows={data.attempts}
            row={{ key: (a, i) => `${a.at}-${i}`, top: true }}
            size="compact"
          />
        )}
      </div>
      <div>
        <h3 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">Payload</h3>
        <pre className="max-h-72 overflow-auto rounded-md bg-slate-50 p-2 font-mono text-xs text-slate-800">
          {stringifyExactJson(data.payload, 2)}
        </pre>
      </div>
    </div>
  );
}
