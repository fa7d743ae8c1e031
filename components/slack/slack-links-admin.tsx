"use client";

import type { SlackLinkInfo } from "@/lib/slack/links";
import { queryKeys } from "@/lib/query/keys";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { ConfirmButton } from "../ui/confirm";
import { actionsColumn, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { DialogButton, fieldText, FormDialog, type DialogProps } from "../ui/dialog";
import { TextField } from "../ui/field";
import { EmptyState, StateLabel, Subsection } from "../ui/page";

// The admin's list of which Slack user acts as which Settle person: add one for someone, remove one. People
// link their own under Account → Slack; both land here.

const ACTING_ROLES = new Set(["operator", "manager", "admin"]);

function AddLinkDialog({ onClose, onDone }: DialogProps<SlackLinkInfo>) {
  const add = useCollectionMutation(queryKeys.admin.slackLinks, {
    mutationFn: (body: { email: string; slack_user_id: string }) => api.post("/api/v1/admin/slack-links", { body }),
    onSuccess: onDone,
  });
  return (
    <FormDialog
      title="Link a Slack user"
      description="Their clicks in Slack then act as this person, with this person's role at the time of each click. A Slack user linked to someone else before moves to this person."
      submitLabel="Link"
      pendingLabel="Linking…"
      step={add}
      onSubmit={(form) =>
        add.mutate({ email: fieldText(form, "email"), slack_user_id: fieldText(form, "slack_user_id") })
      }
      onClose={onClose}
    >
      <TextField label="Settle person's email" name="email" type="email" required autoComplete="off" />
      <TextField
        label="Slack user id"
        name="slack_user_id"
        required
        pattern="[UW][A-Z0-9]{2,30}"
        title="A Slack user id: U or W, then capital letters and digits"
        placeholder="U012ABCDEF"
        autoComplete="off"
        hint="In Slack: the person's profile → ⋮ → Copy member ID."
      />
    </FormDialog>
  );
}

const linkRow: RowSpec<SlackLinkInfo> = {
  key: (l) => l.slack_user_id,
  testId: "slack-link-row",
  data: (l) => ({ "data-slack-user": l.slack_user_id }),
  dimmed: (l) => !l.active,
};

export function SlackLinksAdmin({
  initial,
  onChanged,
}: {
  initial: SlackLinkInfo[];
  onChanged: (message: string) => void;
}) {
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.slackLinks,
    queryFn: () => api.get("/api/v1/admin/slack-links"),
    initialData: { items: initial },
  });
  const remove = useCollectionMutation(queryKeys.admin.slackLinks, {
    mutationFn: (slackUserId: string) =>
      api.delete("/api/v1/admin/slack-links/{slack_user_id}", { params: { slack_user_id: slackUserId } }),
  });
  const columns: Array<Column<SlackLinkInfo>> = [
    { header: "Slack user", className: "nowrap mono", cell: (l) => l.slack_user_id },
    { header: "Acts as", className: "font-medium", cell: (l) => l.email },
    {
      header: "Role",
      cell: (l) => (
        <>
          {l.role ?? "no role"}
          {l.active && !ACTING_ROLES.has(l.role ?? "") ? (
            <span className="block text-xs text-slate-500">cannot act from Slack</span>
          ) : null}
        </>
      ),
    },
    {
      header: "Status",
      className: "nowrap",
      cell: (l) => (l.active ? <StateLabel state="active" /> : <StateLabel state="deactivated" />),
    },
    {
      header: "Linked",
      className: "nowrap text-slate-600",
      cell: (l) => (
        <>
          {formatUtc(l.created_at, { seconds: false })}
          <span className="block text-xs text-slate-500">by {l.created_by}</span>
        </>
      ),
    },
    actionsColumn((l) => (
      <ConfirmButton
        size="sm"
        aria-label={`Remove the link of ${l.slack_user_id}`}
        title={`Remove ${l.slack_user_id}'s link?`}
        description={`From now on, clicks by ${l.slack_user_id} in Slack change nothing; they are told to link their account. What they did stays in the audit trail under ${l.email}.`}
        confirmLabel="Remove link"
        step={remove}
        act={() => remove.mutateAsync(l.slack_user_id).then(() => onChanged(`${l.slack_user_id} is no longer linked.`))}
      >
        Remove
      </ConfirmButton>
    )),
  ];
  return (
    <Subsection
      id="slack-links-heading"
      title="Linked Slack users"
      aside={
        <DialogButton
          size="sm"
          dialog={(props) => <AddLinkDialog {...props} />}
          onDone={(l: SlackLinkInfo) => onChanged(`${l.slack_user_id} now acts as ${l.email}.`)}
        >
          Link a Slack user
        </DialogButton>
      }
    >
      <DataTable
        caption="Slack users linked to Settle people"
        columns={columns}
        rows={data.items}
        row={linkRow}
        error={error}
        empty={
          <EmptyState testId="slack-links-empty">
            No Slack user is linked yet, so every click in Slack is answered &ldquo;link your account&rdquo; and changes
            nothing. People link their own under Account → Slack (the bot sends them a code), or link someone here with
            their Slack member id.
          </EmptyState>
        }
      />
    </Subsection>
  );
}
