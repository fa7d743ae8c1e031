"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { Fragment, useState } from "react";
import type { WebhookDeliveryInfo } from "@/lib/webhooks/deliveries";
import { useCollectionMutation } from "../admin/use-collection";
import { formatUtc } from "../audit/time";
import { invocationHref } from "@/lib/invocations/links";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/error-alert";
import { DeliveryDetails } from "./delivery-details";
import { deliverySource, type DeliverySource } from "./delivery-source";

// An endpoint's deliveries, newest first, refreshed every few seconds: status,
// tries, the last answer, when the next try is due, and Resend.

const filters = [
  { value: "", label: "All" },
  { value: "pending", label: "Pending" },
  { value: "delivered", label: "Delivered" },
  { value: "failed", label: "Failed" },
] as const;

const statusLook: Record<WebhookDeliveryInfo["status"], { glyph: string; tone: string; label: string }> = {
  pending: { glyph: "…", tone: "text-amber-800", label: "Pending" },
  delivered: { glyph: "✓", tone: "text-emerald-800", label: "Delivered" },
  failed: { glyph: "✕", tone: "font-semibold text-rose-700", label: "Failed" },
};

function DeliveryStatus({ status }: { status: WebhookDeliveryInfo["status"] }) {
  const look = statusLook[status];
  return (
    <span className={`inline-flex items-center gap-1 ${look.tone}`}>
      <span aria-hidden="true">{look.glyph}</span>
      {look.label}
    </span>
  );
}

export function DeliveryLog({ source }: { source: DeliverySource }) {
  const from = deliverySource(source);
  const [status, setStatus] = useState<(typeof filters)[number]["value"]>("");
  const [open, setOpen] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const log = useInfiniteQuery({
    queryKey: from.listKey(status),
    queryFn: ({ pageParam }) => from.list({ limit: 50, status: status || undefined, cursor: pageParam || undefined }),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: 5000,
  });
  const resend = useCollectionMutation(from.root, {
    mutationFn: (delivery: WebhookDeliveryInfo) => from.resend(delivery.id),
    onSuccess: (d) => setNotice(`${d.event_id} is queued to be sent again now.`),
  });
  const items = log.data?.pages.flatMap((p) => p.items) ?? [];

  return (
    <section aria-labelledby="deliveries-heading" className="space-y-3">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h2 id="deliveries-heading" className="text-base font-semibold">
          Delivery log
        </h2>
        <div
          role="group"
          aria-label="Show deliveries"
          className="inline-flex rounded-md border border-slate-300 bg-white p-0.5 text-sm"
        >
          {filters.map((f) => (
            <button
              key={f.value}
              type="button"
              aria-pressed={status === f.value}
              onClick={() => setStatus(f.value)}
              className={`rounded px-2.5 py-1 ${status === f.value ? "bg-slate-900 text-white" : "text-slate-700 hover:bg-slate-100"}`}
            >
              {f.label}
            </button>
          ))}
        </div>
      </div>
      <p role="status" aria-live="polite" className="text-sm text-emerald-800">
        {notice}
      </p>
      <ErrorAlert error={resend.error} prefix="Resend failed:" />
      <ErrorAlert error={log.error} prefix="Could not load the log:" />

      {log.isPending ? (
        <p className="text-sm text-slate-600">Loading…</p>
      ) : items.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-700">
          {status
            ? `No ${status} deliveries.`
            : source.kind === "endpoint"
              ? `Nothing sent yet. The next time one of ${source.runtime}'s invocations settles or its decision changes, the event appears here within a few seconds.`
              : "No message yet. When a call this channel hears of needs a person, its digest appears here once the channel's digest window has passed."}
        </div>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Deliveries to this endpoint, newest first</caption>
            <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="px-3 py-2 font-medium">
                  Created
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Event
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Invocation
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Status
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Tries
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Last answer
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  Next try
                </th>
                <th scope="col" className="px-3 py-2 font-medium">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {items.map((d) => (
                <Fragment key={d.id}>
                  <tr data-testid="delivery-row" className="align-top">
                    <td className="whitespace-nowrap px-3 py-2">{formatUtc(d.created_at)}</td>
                    <td className="px-3 py-2">
                      <div className="font-mono text-xs">{d.event_type}</div>
                      <div className="max-w-[14rem] truncate font-mono text-xs text-slate-500" title={d.event_id}>
                        {d.event_id}
                      </div>
                    </td>
                    <td className="px-3 py-2">
                      {d.invocation_id && source.kind === "endpoint" ? (
                        <Link
                          href={invocationHref(d.invocation_id, source.runtime)}
                          className="font-mono text-xs underline underline-offset-2"
                        >
                          {d.invocation_id}
                        </Link>
                      ) : (
                        "—"
                      )}
                    </td>
                    <td className="whitespace-nowrap px-3 py-2">
                      <DeliveryStatus status={d.status} />
                      {d.resent_by ? <div className="text-xs text-slate-500">resent by {d.resent_by}</div> : null}
                    </td>
                    <td className="px-3 py-2">{d.attempts}</td>
                    <td className="max-w-xs px-3 py-2">
                      <span className="font-mono text-xs">
                        {d.last_status_code ?? (d.attempts > 0 ? "no answer" : "—")}
                      </span>
                      {d.last_error && d.status !== "delivered" ? (
                        <div className="truncate text-xs text-slate-600" title={d.last_error}>
                          {d.last_error}
                        </div>
                      ) : null}
                    </td>
                    <td className="whitespace-nowrap px-3 py-2">
                      {d.next_attempt_at ? formatUtc(d.next_attempt_at) : "—"}
                    </td>
                    <td className="whitespace-nowrap px-3 py-2 text-right">
                      <Button
                        size="sm"
                        variant="ghost"
                        aria-expanded={open === d.id}
                        onClick={() => setOpen(open === d.id ? null : d.id)}
                      >
                        {open === d.id ? "Hide" : "Details"}
                        <span className="sr-only"> of {d.event_id}</span>
                      </Button>
                      <Button
                        size="sm"
                        onClick={() => {
                          setNotice(null);
                          resend.mutate(d);
                        }}
                        disabled={resend.isPending && resend.variables?.id === d.id}
                      >
                        Resend<span className="sr-only"> {d.event_id}</span>
                      </Button>
                    </td>
                  </tr>
                  {open === d.id ? (
                    <tr>
                      <td colSpan={8} className="bg-slate-50/60 px-3 py-3">
                        <DeliveryDetails source={source} deliveryId={d.id} />
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.hasNextPage ? (
        <Button onClick={() => log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? "Loading…" : "Show older deliveries"}
        </Button>
      ) : null}
    </section>
  );
}
