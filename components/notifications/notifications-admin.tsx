"use client";

import Link from "next/link";
import { useState } from "react";
import type { NotificationChannelInfo } from "@/lib/notifications/channels";
import { notificationEventLabels } from "@/lib/notifications/events";
import { queryKeys } from "@/lib/query/keys";
import { ShownOnceDialog } from "../admin/shown-once";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { Button } from "../ui/button";
import { ConfirmButton } from "../ui/confirm";
import { actionsColumn, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { DialogButton } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { EmptyState, PageSection, StateLabel } from "../ui/page";
import { EndpointState, OutboxCounts } from "../webhooks/webhooks-admin";
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

const channelRow: RowSpec<NotificationChannelInfo> = {
  key: (c) => c.id,
  testId: "channel-row",
  top: true,
  dimmed: (c) => !c.enabled,
};

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
  const [created, setCreated] = useState<CreatedChannel | null>(null);
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
  });
  const columns: Array<Column<NotificationChannelInfo>> = [
    {
      header: "Channel",
      className: "max-w-sm",
      cell: (c) => (
        <>
          <div className="font-medium">{c.kind === "slack" ? "Slack webhook" : "Email"}</div>
          <div className="truncate font-mono text-xs" title={channelTarget(c)}>
            {channelTarget(c)}
          </div>
        </>
      ),
    },
    { header: "Hears of", cell: (c) => <HearsOf c={c} /> },
    { header: "Digest", className: "text-xs", cell: (c) => digestText(c.digest_s) },
    { header: "State", className: "nowrap", cell: (c) => <EndpointState enabled={c.enabled} /> },
    {
      header: "Messages",
      className: "nowrap text-xs",
      cell: (c) => (
        <>
          <OutboxCounts counts={c.messages} sentWord="sent" />
          <div className="text-slate-500">
            {c.waiting > 0 ? `${c.waiting} waiting for the next message · ` : ""}
            {c.last_message_at ? `last ${formatUtc(c.last_message_at)}` : "none yet"}
          </div>
          {c.last_failure ? (
            // On the row, not only in the log: a refused address fails every try until someone changes something.
            <div className="max-w-xs whitespace-normal break-words" data-testid="channel-last-failure">
              <StateLabel state="failed">
                last try {formatUtc(c.last_failure.at)}
                {c.last_failure.status === "pending" ? " (tried again with back-off)" : ""}:
              </StateLabel>{" "}
              {c.last_failure.error}
            </div>
          ) : null}
        </>
      ),
    },
    actionsColumn((c) => (
      <>
        <Link
          href={`/admin/notifications/${c.id}`}
          className="self-center text-sm font-medium underline underline-offset-2"
        >
          Message log<span className="sr-only"> of {channelTarget(c)}</span>
        </Link>
        <Button size="sm" onClick={() => toggle.mutate(c)} disabled={toggle.isPending && toggle.variables?.id === c.id}>
          {c.enabled ? "Disable" : "Enable"}
        </Button>
        <ConfirmButton
          size="sm"
          variant="ghost"
          title="Delete this channel?"
          description={`${channelTarget(c)} will no longer be told anything; its message log goes with it.`}
          confirmLabel="Delete channel"
          step={remove}
          act={() => remove.mutateAsync(c)}
        >
          Delete<span className="sr-only"> {channelTarget(c)}</span>
        </ConfirmButton>
      </>
    )),
  ];

  return (
    <PageSection
      id="notifications-heading"
      title="Notifications"
      description="Tell a person when a call needs one: a new unknown or stalled call, an approval, an SLA escalation, a possible duplicate. A storm is one message per channel per digest window, naming the first few calls and the count, each with a link to its page here. Messages never carry a button that decides: that is done signed in."
      action={
        <DialogButton<CreatedChannel>
          variant="primary"
          dialog={(props) => <CreateChannelDialog runtimes={runtimes} emailReady={emailReady} {...props} />}
          onDone={setCreated}
        >
          Add channel
        </DialogButton>
      }
    >
      <ErrorAlert error={toggle.error} prefix="Could not change the channel:" />
      <DataTable
        caption="Notification channels"
        columns={columns}
        rows={data.items}
        row={channelRow}
        error={error}
        empty={
          <EmptyState title="Nobody is told yet">
            <p>
              Until a channel is added, an unknown money call waits in the queue until someone looks. Add a Slack
              incoming webhook (or any receiver that takes Slack&apos;s JSON) or an email address, then narrow it to the
              runtimes, classes and events that person answers for.
            </p>
          </EmptyState>
        }
      />

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
    </PageSection>
  );
}
