"use client";

import { useState } from "react";
import type { NewNotificationChannel, NotificationChannelInfo } from "@/lib/notifications/channels";
import { notificationEventLabels, notificationEvents } from "@/lib/notifications/events";
import { effectClasses } from "@/lib/outcome/queue-order";
import { queryKeys } from "@/lib/query/keys";
import { useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { fieldText, FormDialog, type DialogProps } from "../ui/dialog";
import { TextField } from "../ui/field";

// Adding a channel: where (a Slack-compatible webhook or email), and what it hears of. Every list starts
// empty, which means all: a new channel tells of everything until it is narrowed.

export type CreatedChannel = { channel: NotificationChannelInfo; secret: string };

function Checkboxes({
  legend,
  name,
  options,
  hint,
}: {
  legend: string;
  name: string;
  options: Array<{ value: string; label: string }>;
  hint: string;
}) {
  return (
    <fieldset className="space-y-1">
      <legend className="text-sm font-medium text-slate-800">{legend}</legend>
      <div className="flex flex-wrap gap-x-4 gap-y-1">
        {options.map((o) => (
          <label key={o.value} className="inline-flex items-center gap-1.5 text-sm">
            <input type="checkbox" name={name} value={o.value} className="size-4" />
            {o.label}
          </label>
        ))}
      </div>
      <p className="text-xs text-slate-500">{hint}</p>
    </fieldset>
  );
}

export function CreateChannelDialog({
  runtimes,
  emailReady,
  onClose,
  onDone,
}: { runtimes: string[]; emailReady: boolean } & DialogProps<CreatedChannel>) {
  const [kind, setKind] = useState<"slack" | "email">("slack");
  const create = useCollectionMutation(queryKeys.admin.notifications, {
    mutationFn: (body: NewNotificationChannel) => api.post("/api/v1/admin/notifications", { body }),
    onSuccess: onDone,
  });
  const submit = (form: FormData) => {
    const all = (name: string) => form.getAll(name).map(String);
    const filters = {
      runtimes: all("runtimes"),
      effect_classes: all("effect_classes") as NewNotificationChannel["effect_classes"],
      events: all("events") as NewNotificationChannel["events"],
      digest_s: Number(form.get("digest_s") ?? 60),
    };
    const to = fieldText(form, "to")
      .split(/[,\s]+/)
      .filter(Boolean);
    create.mutate(
      kind === "slack" ? { kind: "slack", url: fieldText(form, "url"), ...filters } : { kind: "email", to, ...filters },
    );
  };
  return (
    <FormDialog
      title="Add a notification channel"
      description="Settle tells this channel when a call needs a person. What arrives within the digest window is one message: the first few calls and the count."
      submitLabel="Add channel"
      pendingLabel="Adding…"
      step={create}
      onSubmit={submit}
      onClose={onClose}
    >
      <fieldset className="space-y-1">
        <legend className="text-sm font-medium text-slate-800">Send to</legend>
        <div className="flex gap-4 text-sm">
          <label className="inline-flex items-center gap-1.5">
            <input type="radio" name="kind" checked={kind === "slack"} onChange={() => setKind("slack")} />
            Slack-compatible webhook
          </label>
          <label className="inline-flex items-center gap-1.5">
            <input
              type="radio"
              name="kind"
              checked={kind === "email"}
              disabled={!emailReady}
              onChange={() => setKind("email")}
            />
            Email
          </label>
        </div>
        {emailReady ? null : (
          <p className="text-xs text-slate-500">
            Email needs an SMTP server: set <span className="font-mono">SETTLE_SMTP_URL</span> and{" "}
            <span className="font-mono">SETTLE_SMTP_FROM</span>, then restart Settle.
          </p>
        )}
      </fieldset>
      {kind === "slack" ? (
        <TextField
          label="Incoming webhook URL"
          name="url"
          type="url"
          required
          placeholder="https://hooks.slack.com/services/…"
          autoComplete="off"
          hint="http:// or https:// at a public address. Messages are Block Kit with a link to each call; decisions are made here, signed in."
        />
      ) : (
        <TextField
          label="To"
          name="to"
          required
          placeholder="ops@example.com, oncall@example.com"
          autoComplete="off"
          hint="One or more addresses, separated by commas."
        />
      )}
      <Checkboxes
        legend="Runtimes"
        name="runtimes"
        options={runtimes.map((r) => ({ value: r, label: r }))}
        hint="None ticked: every runtime, those added later too."
      />
      <Checkboxes
        legend="Effect classes"
        name="effect_classes"
        options={effectClasses.map((c) => ({ value: c, label: c }))}
        hint="None ticked: every class, unclassified calls too."
      />
      <Checkboxes
        legend="Events"
        name="events"
        options={notificationEvents.map((e) => ({ value: e, label: notificationEventLabels[e] }))}
        hint="None ticked: all. An unknown call whose tool has a verifier is told only once verification ends without settling it."
      />
      <TextField
        label="Digest window (seconds)"
        name="digest_s"
        type="number"
        min={0}
        max={86400}
        defaultValue={60}
        required
        hint="At most one message per window; 0 sends each call as it comes."
      />
    </FormDialog>
  );
}
