"use client";

import { useRef, type FormEvent } from "react";
import type { SlackSettingsInput, SlackSettingsView } from "@/lib/slack/settings";
import { SLACK_WEB_API } from "@/lib/slack/manifest";
import { queryKeys } from "@/lib/query/keys";
import { CopyButton } from "../admin/copy-button";
import { useCollectionMutation } from "../admin/use-collection";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { SubmitButton } from "../ui/button";
import { fieldText } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { TextField } from "../ui/field";
import { StateLabel, Subsection } from "../ui/page";

// The Slack app's credentials: written here, never shown again. Each secret says only whether it is set and
// when it was last replaced; a field left empty keeps what is stored. The interactivity URL is what the admin
// pastes into Slack.

function SecretState({ testId, set, changedAt }: { testId: string; set: boolean; changedAt: string | null }) {
  return (
    <span data-testid={testId} className="block">
      {set ? (
        <StateLabel state="set">
          {changedAt ? `— changed ${formatUtc(changedAt, { seconds: false })}` : null}
        </StateLabel>
      ) : (
        <StateLabel state="not_set" />
      )}
    </span>
  );
}

/** What was replaced, in words, for the notice after saving. */
function savedText(body: SlackSettingsInput): string {
  const replaced = [body.signing_secret && "the signing secret", body.bot_token && "the bot token"].filter(Boolean);
  const what = replaced.length > 0 ? `Replaced ${replaced.join(" and ")}` : "Saved";
  return `${what}${body.api_base_url ? `; the Web API address is ${body.api_base_url}` : ""}. Secrets are never shown again.`;
}

export function SlackCredentials({
  settings,
  onSaved,
}: {
  settings: SlackSettingsView;
  onSaved: (message: string) => void;
}) {
  const form = useRef<HTMLFormElement>(null);
  const save = useCollectionMutation(queryKeys.admin.slackSettings, {
    mutationFn: (body: SlackSettingsInput) => api.put("/api/v1/admin/integrations/slack", { body }),
    onSuccess: (_, body) => {
      form.current?.reset();
      onSaved(savedText(body));
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = new FormData(event.currentTarget);
    const body: SlackSettingsInput = {};
    const signing = fieldText(values, "signing_secret");
    const token = fieldText(values, "bot_token");
    const base = fieldText(values, "api_base_url") || SLACK_WEB_API;
    if (signing) body.signing_secret = signing;
    if (token) body.bot_token = token;
    if (base.replace(/\/+$/, "") !== settings.api_base_url) body.api_base_url = base;
    save.mutate(body);
  };
  return (
    <Subsection id="slack-app-heading" title="The Slack app">
      <form
        ref={form}
        // Drawn again after each save, so the Web API field shows what is stored now.
        key={settings.updated_at ?? "new"}
        onSubmit={submit}
        data-testid="slack-credentials"
        className="max-w-3xl space-y-4 rounded-lg border border-slate-200 bg-white p-4 shadow-sm"
      >
        <TextField
          label="Signing secret"
          name="signing_secret"
          type="password"
          autoComplete="off"
          required={!settings.signing_secret_set}
          placeholder={settings.signing_secret_set ? "Stored — leave empty to keep it" : "Paste the signing secret"}
          hint={
            <>
              <SecretState
                testId="signing-secret-state"
                set={settings.signing_secret_set}
                changedAt={settings.signing_secret_changed_at}
              />
              In Slack: your app → Basic Information → App Credentials → Signing Secret. Settle checks every request
              from Slack with it.
            </>
          }
        />
        <TextField
          label="Bot token"
          name="bot_token"
          type="password"
          autoComplete="off"
          required={!settings.bot_token_set}
          pattern="xoxb-.*"
          title="A bot token starts with xoxb-"
          placeholder={settings.bot_token_set ? "Stored — leave empty to keep it" : "xoxb-…"}
          hint={
            <>
              <SecretState
                testId="bot-token-state"
                set={settings.bot_token_set}
                changedAt={settings.bot_token_changed_at}
              />
              OAuth &amp; Permissions → Bot User OAuth Token. Settle posts messages and link codes with it.
            </>
          }
        />
        <TextField
          label="Web API address (optional)"
          name="api_base_url"
          type="url"
          autoComplete="off"
          defaultValue={settings.api_base_url}
          placeholder={SLACK_WEB_API}
          hint={`Slack's own, ${SLACK_WEB_API}, unless you use a Slack-compatible server. Left empty, Slack's.`}
        />
        <div className="flex items-center gap-3">
          <SubmitButton step={save} pendingLabel="Saving…">
            Save
          </SubmitButton>
          <p className="text-xs text-slate-500">
            Both secrets are stored encrypted and are never shown again, to anyone. To change one, paste the new one.
          </p>
        </div>
        <ErrorAlert error={save.error} look="box" />
      </form>
    </Subsection>
  );
}

function UrlLine({ testId, url, label }: { testId: string; url: string; label: string }) {
  return (
    <div className="flex max-w-3xl items-center gap-2">
      <code
        data-testid={testId}
        className="min-w-0 flex-1 break-all rounded-md border border-slate-200 bg-slate-50 px-3 py-1.5 font-mono text-sm"
      >
        {url}
      </code>
      <CopyButton text={url} label={label} />
    </div>
  );
}

/** Where Slack sends clicks and the slash command: pasted into the app (the manifest has both already). */
export function SlackUrls({ settings }: { settings: SlackSettingsView }) {
  return (
    <Subsection id="slack-url-heading" title="Addresses to paste into Slack">
      <p className="max-w-3xl text-sm text-slate-600">
        The <strong>interactivity URL</strong> goes under Interactivity &amp; Shortcuts → Request URL: Slack sends every
        button click and form there. The <strong>slash command URL</strong> is the Request URL of the{" "}
        <span className="font-mono">/settle</span> command (Slash Commands), with which people link their Slack user.
        The manifest below has both already. Slack signs every request with the signing secret.
      </p>
      <UrlLine testId="slack-interactivity-url" url={settings.interactivity_url} label="Copy interactivity URL" />
      <UrlLine testId="slack-command-url" url={settings.slash_command_url} label="Copy slash command URL" />
    </Subsection>
  );
}
