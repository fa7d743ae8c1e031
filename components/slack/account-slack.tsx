"use client";

import Link from "next/link";
import { useState, type FormEvent } from "react";
import type { SlackLinkInfo } from "@/lib/slack/links";
import { queryKeys } from "@/lib/query/keys";
import { useCollection, useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCan, useCurrentUser } from "../current-user";
import { Button, SubmitButton } from "../ui/button";
import { ConfirmButton } from "../ui/confirm";
import { actionsColumn, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { fieldText } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { TextField } from "../ui/field";
import { EmptyState, PageSection, Subsection } from "../ui/page";
import { CommandCodeStep, type CommandCode } from "./command-code";

// Account → Slack: a person links their own Slack user. They give their member id, Settle's bot posts them a
// one-time code in Slack, they type it here. One guess: a wrong code ends the attempt, and they ask again.

const ACTING_ROLES = new Set(["operator", "manager", "admin"]);
const formBox = "space-y-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm";

type Sent = { slackUserId: string; expiresAt: string };

function CodeStep({ sent, onLinked, onAgain }: { sent: Sent; onLinked: (id: string) => void; onAgain: () => void }) {
  const confirm = useCollectionMutation(queryKeys.me.slackLinks, {
    mutationFn: (code: string) => api.post("/api/v1/me/slack-links/confirm", { body: { code } }),
    onSuccess: ({ linked }) => onLinked(linked),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    confirm.mutate(fieldText(new FormData(event.currentTarget), "code"));
  };
  // A refusal ends the attempt on the server (one guess): the form then offers only a new code.
  const ended = Boolean(confirm.error);
  return (
    <form onSubmit={submit} className={formBox} data-testid="slack-code-step">
      <h3 className="text-sm font-medium text-slate-800">Get a code from Settle&apos;s bot</h3>
      <p className="text-sm text-slate-700">
        Settle&apos;s bot sent a direct message to <span className="font-mono">{sent.slackUserId}</span> in Slack with
        an 8-digit code. Type it here before {formatUtc(sent.expiresAt, { seconds: false })}. You have one try.
      </p>
      <TextField
        label="Code from Slack"
        name="code"
        required
        inputMode="numeric"
        pattern="\d{8}"
        maxLength={8}
        title="The 8 digits the Settle bot sent you"
        autoComplete="one-time-code"
        disabled={ended}
        autoFocus
      />
      <ErrorAlert error={confirm.error} look="box" />
      <div className="flex items-center gap-2">
        {ended ? null : (
          <SubmitButton step={confirm} pendingLabel="Linking…">
            Link my Slack user
          </SubmitButton>
        )}
        <Button variant={ended ? "primary" : "ghost"} onClick={onAgain}>
          {ended ? "Ask for a new code" : "Start again"}
        </Button>
      </div>
    </form>
  );
}

function StartStep({ onSent }: { onSent: (sent: Sent) => void }) {
  const start = useCollectionMutation(queryKeys.me.slackLinks, {
    mutationFn: (slackUserId: string) => api.post("/api/v1/me/slack-links", { body: { slack_user_id: slackUserId } }),
    onSuccess: (answer, slackUserId) => onSent({ slackUserId, expiresAt: answer.expires_at }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    start.mutate(fieldText(new FormData(event.currentTarget), "slack_user_id"));
  };
  return (
    <form onSubmit={submit} className={formBox} data-testid="slack-start-step">
      <h3 className="text-sm font-medium text-slate-800">Get a code from Settle&apos;s bot</h3>
      <TextField
        label="Your Slack member id"
        name="slack_user_id"
        required
        pattern="[UW][A-Z0-9]{2,30}"
        title="A Slack member id: U or W, then capital letters and digits"
        placeholder="U012ABCDEF"
        autoComplete="off"
        hint="In Slack: click your name or picture → Profile → ⋮ (more) → Copy member ID."
      />
      <ErrorAlert error={start.error} look="box" />
      <SubmitButton step={start} pendingLabel="Sending…">
        Send me a code in Slack
      </SubmitButton>
    </form>
  );
}

const linkRow: RowSpec<SlackLinkInfo> = { key: (l) => l.slack_user_id, testId: "my-slack-link" };
const columns: Array<Column<SlackLinkInfo>> = [
  { header: "Slack user", className: "nowrap mono", cell: (l) => l.slack_user_id },
  { header: "Linked", className: "nowrap", cell: (l) => formatUtc(l.created_at, { seconds: false }) },
  { header: "By", className: "text-slate-600", cell: (l) => l.created_by },
];

/** Removes one of your own links: that Slack user's clicks change nothing from then on. */
function RemoveMyLink({ link, onRemoved }: { link: SlackLinkInfo; onRemoved: (message: string) => void }) {
  const remove = useCollectionMutation(queryKeys.me.slackLinks, {
    mutationFn: (slackUserId: string) =>
      api.delete("/api/v1/me/slack-links/{slack_user_id}", { params: { slack_user_id: slackUserId } }),
  });
  return (
    <ConfirmButton
      size="sm"
      aria-label={`Remove your link to ${link.slack_user_id}`}
      title={`Remove your link to ${link.slack_user_id}?`}
      description={`From now on, clicks by ${link.slack_user_id} on Settle's Slack messages change nothing; Slack answers "link your account". What you did from Slack stays in the audit trail.`}
      confirmLabel="Remove link"
      step={remove}
      act={() =>
        remove
          .mutateAsync(link.slack_user_id)
          .then(() => onRemoved(`${link.slack_user_id} is no longer linked to you.`))
      }
    >
      Remove
    </ConfirmButton>
  );
}

export function AccountSlack({ configured, initial }: { configured: boolean; initial: SlackLinkInfo[] }) {
  const me = useCurrentUser();
  const isAdmin = useCan("administer");
  const [sent, setSent] = useState<Sent | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // While a slash-command code is shown, the list is read every few seconds: the link is made in Slack.
  const [command, setCommand] = useState<{ code: CommandCode; before: string[] } | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.me.slackLinks,
    queryFn: () => api.get("/api/v1/me/slack-links"),
    initialData: { items: initial },
    refetchInterval: command ? 3_000 : undefined,
  });
  const fromSlack = command ? data.items.find((l) => !command.before.includes(l.slack_user_id)) : undefined;
  if (command && fromSlack) {
    setCommand(null);
    setNotice(`${fromSlack.slack_user_id} is linked to you from Slack: your clicks there now act as ${me.email}.`);
  }
  const mayAct = ACTING_ROLES.has(me.role);
  const description = (
    <>
      Link your Slack user to act on Settle&apos;s Slack messages — approve, reject, record what you found, escalate —
      as {me.email}, with your role at the time of each click.
      {mayAct
        ? null
        : ` Your role (${me.role}) cannot act: a linked click is answered "your role cannot act" and changes nothing.`}
    </>
  );
  if (!configured && data.items.length === 0)
    return (
      <PageSection id="account-slack-heading" title="Slack" description={description}>
        <EmptyState title="The Slack app is not set up yet" testId="slack-not-configured">
          <p>
            Before anyone can link, an admin creates Settle&apos;s app in Slack and gives Settle its signing secret and
            bot token under Admin → Slack app. The bot then sends you a one-time code here.
          </p>
          {isAdmin ? (
            <p>
              <Link href="/admin/integrations/slack" className="text-indigo-700 hover:underline">
                Set up the Slack app
              </Link>
            </p>
          ) : (
            <p>Ask an admin of this Settle to set it up.</p>
          )}
        </EmptyState>
      </PageSection>
    );
  return (
    <PageSection id="account-slack-heading" title="Slack" description={description} notice={notice}>
      <Subsection id="my-slack-links-heading" title="Your Slack users">
        <DataTable
          caption="Slack users linked to you"
          columns={[...columns, actionsColumn((l: SlackLinkInfo) => <RemoveMyLink link={l} onRemoved={setNotice} />)]}
          rows={data.items}
          row={linkRow}
          error={error}
          empty={
            <EmptyState testId="my-slack-links-empty">
              No Slack user is linked to you: clicks you make in Slack are answered &ldquo;link your account&rdquo;.
            </EmptyState>
          }
        />
      </Subsection>
      <Subsection
        id="slack-link-heading"
        title={data.items.length > 0 ? "Link another Slack user" : "Link your Slack user"}
      >
        {!configured ? (
          <p className="text-sm text-slate-600">
            The Slack app is not set up any more, so no code can be sent: ask an admin.
          </p>
        ) : (
          <div className="grid max-w-5xl gap-4 md:grid-cols-2">
            {sent ? (
              <CodeStep
                sent={sent}
                onLinked={(id) => {
                  setSent(null);
                  setNotice(`${id} is linked to you: your clicks in Slack now act as ${me.email}.`);
                }}
                onAgain={() => setSent(null)}
              />
            ) : (
              <StartStep
                onSent={(s) => {
                  setNotice(null);
                  setSent(s);
                }}
              />
            )}
            <CommandCodeStep
              box={formBox}
              shown={command?.code ?? null}
              onShown={(code) => {
                setNotice(null);
                setCommand(code ? { code, before: data.items.map((l) => l.slack_user_id) } : null);
              }}
            />
          </div>
        )}
      </Subsection>
    </PageSection>
  );
}
