"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import type { WebhookDeliveryInfo } from "@/lib/webhooks/deliveries";
import { useCollectionMutation } from "../admin/use-collection";
import { formatUtc } from "../audit/time";
import { invocationHref } from "@/lib/invocations/links";
import { Button } from "../ui/button";
import { actionsColumn, DataTable, type Column } from "../ui/data-table";
import { ErrorAlert } from "../ui/error-alert";
import { EmptyState, Notice, StateLabel, Subsection } from "../ui/page";
import { DeliveryDetails } from "./delivery-details";
import { deliverySource, type DeliverySource } from "./delivery-source";
import { InvocationId } from "../ui/invocation-id";

// An endpoint's deliveries, newest first, refreshed every few seconds: status,
// tries, the last answer, when the next try is due, and Resend.

const filters = [
  { value: "", label: "All" },
  { value: "pending", label: "Pending" },
  { value: "delivered", label: "Delivered" },
  { value: "failed", label: "Failed" },
] as const;

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
  const columns: Array<Column<WebhookDeliveryInfo>> = [
    { header: "Created", className: "nowrap", cell: (d) => formatUtc(d.created_at) },
    {
      header: "Event",
      cell: (d) => (
        <>
          <div className="font-mono text-xs">{d.event_type}</div>
          <div className="max-w-[14rem] truncate font-mono text-xs text-slate-500" title={d.event_id}>
            {d.event_id}
          </div>
        </>
      ),
    },
    {
      header: "Invocation",
      // A long id breaks anywhere rather than push the row's buttons out of the frame.
      className: "max-w-[14rem]",
      cell: (d) =>
        d.invocation_id && source.kind === "endpoint" ? (
          <Link
            href={invocationHref(d.invocation_id, source.runtime)}
            className="font-mono text-xs underline underline-offset-2"
          >
            <InvocationId id={d.invocation_id} />
          </Link>
        ) : (
          "—"
        ),
    },
    {
      header: "Status",
      className: "nowrap",
      cell: (d) => (
        <>
          <StateLabel state={d.status} />
          {d.resent_by ? <div className="text-xs text-slate-500">resent by {d.resent_by}</div> : null}
        </>
      ),
    },
    { header: "Tries", cell: (d) => d.attempts },
    {
      header: "Last answer",
      className: "max-w-xs",
      cell: (d) => (
        <>
          <span className="font-mono text-xs">{d.last_status_code ?? (d.attempts > 0 ? "no answer" : "—")}</span>
          {d.last_error && d.status !== "delivered" ? (
            <div className="truncate text-xs text-slate-600" title={d.last_error}>
              {d.last_error}
            </div>
          ) : null}
        </>
      ),
    },
    { header: "Next try", className: "nowrap", cell: (d) => (d.next_attempt_at ? formatUtc(d.next_attempt_at) : "—") },
    actionsColumn((d) => (
      <>
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
      </>
    )),
  ];

  return (
    <Subsection
      id="deliveries-heading"
      title="Delivery log"
      aside={
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
      }
    >
      <Notice>{notice}</Notice>
      <ErrorAlert error={resend.error} prefix="Resend failed:" />
      <DataTable
        caption="Deliveries to this endpoint, newest first"
        columns={columns}
        rows={items}
        row={{
          key: (d) => d.id,
          testId: "delivery-row",
          top: true,
          detail: (d) => (open === d.id ? <DeliveryDetails source={source} deliveryId={d.id} /> : null),
        }}
        size="dense"
        loading={log.isPending}
        error={log.error}
        errorPrefix="Could not load the log:"
        empty={
          <EmptyState>
            {status
              ? `No ${status} deliveries.`
              : source.kind === "endpoint"
                ? `Nothing sent yet. The next time one of ${source.runtime}'s invocations settles or its decision changes, the event appears here within a few seconds.`
                : "No message yet. When a call this channel hears of needs a person, its digest appears here once the channel's digest window has passed."}
          </EmptyState>
        }
        footer={
          log.hasNextPage ? (
            <Button onClick={() => log.fetchNextPage()} disabled={log.isFetchingNextPage}>
              {log.isFetchingNextPage ? "Loading…" : "Show older deliveries"}
            </Button>
          ) : null
        }
      />
    </Subsection>
  );
}
