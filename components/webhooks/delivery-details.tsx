"use client";

import { useQuery } from "@tanstack/react-query";
import { formatUtc } from "../audit/time";
import { ErrorAlert } from "../ui/error-alert";
import { deliverySource, type DeliverySource } from "./delivery-source";

// One delivery opened in the log: every try (newest first) and the body as sent.

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
          <table className="w-full text-left text-xs">
            <caption className="sr-only">Attempts of delivery {data.delivery.event_id}</caption>
            <thead className="text-slate-500">
              <tr>
                <th scope="col" className="py-1 pr-3 font-medium">
                  At
                </th>
                <th scope="col" className="py-1 pr-3 font-medium">
                  Status
                </th>
                <th scope="col" className="py-1 pr-3 font-medium">
                  Took
                </th>
                <th scope="col" className="py-1 font-medium">
                  Error
                </th>
              </tr>
            </thead>
            <tbody data-testid="attempt-rows">
              {data.attempts.map((a, i) => (
                <tr key={`${a.at}-${i}`} className="align-top">
                  <td className="whitespace-nowrap py-1 pr-3">{formatUtc(a.at)}</td>
                  <td className="whitespace-nowrap py-1 pr-3 font-mono">{a.status_code ?? "no answer"}</td>
                  <td className="whitespace-nowrap py-1 pr-3">{a.duration_ms} ms</td>
                  <td className="break-all py-1 text-slate-700">{a.error ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <div>
        <h3 className="mb-1 text-xs font-semibold uppercase tracking-wide text-slate-500">Payload</h3>
        <pre className="max-h-72 overflow-auto rounded-md bg-slate-50 p-2 font-mono text-xs text-slate-800">
          {JSON.stringify(data.payload, null, 2)}
        </pre>
      </div>
    </div>
  );
}
