"use client";

import type { NotificationChannelInfo } from "@/lib/notifications/channels";
import { queryKeys } from "@/lib/query/keys";
import { useCollection } from "../admin/use-collection";
import { api } from "../api";
import { ErrorAlert } from "../ui/error-alert";
import { Breadcrumb } from "../ui/page";
import { DeliveryLog } from "../webhooks/delivery-log";
import { EndpointState } from "../webhooks/webhooks-admin";
import { channelTarget, digestText, HearsOf } from "./notifications-admin";

// One channel: what it hears of and every message sent to it (the outbox's log, with Resend).

export function ChannelAdmin({ initial }: { initial: NotificationChannelInfo }) {
  const { data: channel, error } = useCollection({
    queryKey: queryKeys.admin.notificationChannel(initial.id),
    queryFn: () => api.get("/api/v1/admin/notifications/{channel_id}", { params: { channel_id: initial.id } }),
    initialData: initial,
    refetchInterval: 5000,
  });
  return (
    <div className="space-y-6">
      <Breadcrumb
        trail={[{ href: "/admin/notifications", label: "Notifications" }]}
        current={channel.kind === "slack" ? "Slack webhook" : "Email"}
      />
      <section className="space-y-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm">
        <h1 className="text-xl font-semibold">
          {channel.kind === "slack" ? "Slack webhook" : "Email"}{" "}
          <span className="break-all font-mono text-sm font-normal">{channelTarget(channel)}</span>
        </h1>
        <ErrorAlert error={error} prefix="Could not refresh:" />
        <div className="flex flex-wrap gap-8 text-sm">
          <HearsOf c={channel} />
          <div>
            <div>{digestText(channel.digest_s)}</div>
            <div className="text-slate-600">{channel.waiting} waiting for the next message</div>
          </div>
          <EndpointState enabled={channel.enabled} />
        </div>
      </section>
      <DeliveryLog source={{ kind: "channel", id: channel.id }} />
    </div>
  );
}
