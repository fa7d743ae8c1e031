"use client";

import Link from "next/link";
import { useState } from "react";
import type { NotificationChannelInfo } from "@/lib/notifications/channels";
import { notificationEventLabels } from "@/lib/notifications/events";
import { queryKeys } from "@/lib/query/keys";
import { ConfirmDialog } from "../ui/confirm";
import { ShownOnceDialog } from "../admin/shown-once";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/error-alert";
import { EndpointState } from "../webhooks/webhooks-admin";
import { CreateChannelDialog, type CreatedChannel } from "./channel-form";

// Admin → Notifications: who is told when a call needs a person, of what, and how often.

const allOr = (list: readonly string[], all: string) => (list.length === 0 ? all : list.join(", "));

export function channelTarget(c: NotificationChannelInfo): string {
  return c.kind === "slack" ? (c.url ?? "") : c.to.join(", ");
}

export function HearsOf({ c }: { c: NotificationChannelInfo }) {
  return (
    <dl className="grid grid-cols-[auto_1fr] gap-x-2 text-xs">
      <dt className="text-slate-500">Runtimes</dt>
      <dd>{allOr(c.runtimes, "all")}</dd>
      <dt className="text-slate-500">Classes</dt>
      <dd>{allOr(c.effect_classes, "all")}</dd>
      <dt className="text-slate-500">Events</dt>
      <dd>
        {allOr(
          c.events.map((e) => notificationEventLabels[e].toLowerCase()),
          "all",
        )}
      </dd>
    </dl>
  );
}

export const digestText = (s: number) => (s === 0 ? "each call at once" : `one message per ${s} s at most`);

export function NotificationsAdmin({
  initial,
  runtimes,
  emailReady,
}: {
  initial: NotificationChannelInfo[];
  runtimes: string[];
  emailReady: boolean;
}) {
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedChannel | null>(null);
  const [deleting, setDeleting] = useState<NotificationChannelInfo | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.notifications,
    queryFn: () => api.get("/api/v1/admin/notifications"),
    initialData: { items: initial },
    refetchInterval: 5000,
  });
  const toggle = useCollectionMutation(queryKeys.admin.notifications, {
    mutationFn: (c: NotificationChannelInfo) =>
      api.patch("/api/v1/admin/notifications/{channel_id}", {
        params: { channel_id: c.id },
        body: { enabled: !c.enabled },
      }),
  });
  const remove = useCollectionMutation(queryKeys.admin.notifications, {
    mutationFn: (c: NotificationChannelInfo) =>
      api.delete("/api/v1/admin/notifications/{channel_id}", { params: { channel_id: c.id } }),
    onSuccess: () => setDeleting(null),
  });
  const channels = data.items;

  return (
    <section aria-labelledby="notifications-heading" className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h1 id="notifications-heading" className="text-xl font-semibold">
            Notifications
          </h1>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            Tell a person when a call needs one: a new unknown or stalled call, an approval, an SLA escalation, a
            possible duplicate. A storm is one message per channel per digest window, naming the first few calls and the
            count, each with a link to its page here. Messages never carry a button that decides: that is done signed
            in.
          </p>
        </div>
        <Button variant="primary" onClick={() => setCreating(true)}>
          Add channel
        </Button>
      </div>
      <ErrorAlert error={error} prefix="Could not refresh the list:" />
      <ErrorAlert error={toggle.error} prefix="Could not change the channel:" />

      {channels.length === 0 ? (
        <div className="space-y-2 rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-700">
          <h2 className="text-base font-semibold">Nobody is told yet</h2>
          <p>
            Until a channel is added, an unknown money call waits in the queue until someone looks. Add a Slack incoming
            webhook (or any receiver that takes Slack&apos;s JSON) or an email address, then narrow it to the runtimes,
            classes and events that person answers for.
          </p>
        </div>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Notification channels</caption>
            <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="px-4 py-2 font-medium">
                  Channel
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  Hears of
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  Digest
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  State
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  Messages
                </th>
                <th scope="col" className="px-4 py-2 font-medium">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {channels.map((c) => (
                <tr
                  key={c.id}
                  data-testid="channel-row"
                  className={`align-top ${c.enabled ? "" : "bg-slate-50 text-slate-500"}`}
                >
                  <td className="max-w-sm px-4 py-2">
                    <div className="font-medium">{c.kind === "slack" ? "Slack webhook" : "Email"}</div>
                    <div className="truncate font-mono text-xs" title={channelTarget(c)}>
                      {channelTarget(c)}
                    </div>
                  </td>
                  <td className="px-4 py-2">
                    <HearsOf c={c} />
                  </td>
                  <td className="px-4 py-2 text-xs">{digestText(c.digest_s)}</td>
                  <td className="whitespace-nowrap px-4 py-2">
                    <EndpointState enabled={c.enabled} />
                  </td>
                  <td className="whitespace-nowrap px-4 py-2 text-xs">
                    <div>
                      {c.messages.delivered} sent · {c.messages.pending} pending ·{" "}
                      <span className={c.messages.failed > 0 ? "font-semibold text-rose-700" : ""}>
                        {c.messages.failed} failed
                      </span>
                    </div>
                    <div className="text-slate-500">
                      {c.waiting > 0 ? `${c.waiting} waiting for the next message · ` : ""}
                      {c.last_message_at ? `last ${formatUtc(c.last_message_at)}` : "none yet"}
                    </div>
                  </td>
                  <td className="whitespace-nowrap px-4 py-2 text-right">
                    <div className="flex justify-end gap-2">
                      <Link
                        href={`/admin/notifications/${c.id}`}
                        className="self-center text-sm font-medium underline underline-offset-2"
                      >
                        Message log<span className="sr-only"> of {channelTarget(c)}</span>
                      </Link>
                      <Button
                        size="sm"
                        onClick={() => toggle.mutate(c)}
                        disabled={toggle.isPending && toggle.variables?.id === c.id}
                      >
                        {c.enabled ? "Disable" : "Enable"}
                      </Button>
                      <Button size="sm" variant="ghost" onClick={() => setDeleting(c)}>
                        Delete<span className="sr-only"> {channelTarget(c)}</span>
                      </Button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {creating ? (
        <CreateChannelDialog
          runtimes={runtimes}
          emailReady={emailReady}
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false);
            setCreated(c);
          }}
        />
      ) : null}
      {created ? (
        <ShownOnceDialog
          title="Channel added"
          label="Signing secret"
          secret={created.secret}
          note="Slack ignores it. A receiver of your own can check Settle-Signature on each message with it; Settle will not show it again."
          onClose={() => setCreated(null)}
        >
          <p className="text-sm text-slate-700">
            {channelTarget(created.channel)} hears of what needs a person from now on; the first message goes out once
            its digest window ({created.channel.digest_s} s) has passed.
          </p>
        </ShownOnceDialog>
      ) : null}
      {deleting ? (
        <ConfirmDialog
          title="Delete this channel?"
          description={`${channelTarget(deleting)} will no longer be told anything; its message log goes with it.`}
          confirmLabel="Delete channel"
          pending={remove.isPending}
          error={remove.error}
          onConfirm={() => remove.mutate(deleting)}
          onCancel={() => setDeleting(null)}
        />
      ) : null}
    </section>
  );
}
