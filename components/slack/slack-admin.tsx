"use client";

import { useState } from "react";
import type { SlackLinkInfo } from "@/lib/slack/links";
import type { SlackSettingsView } from "@/lib/slack/settings";
import { slackAppManifest } from "@/lib/slack/manifest";
import { queryKeys } from "@/lib/query/keys";
import { CopyButton } from "../admin/copy-button";
import { useCollection } from "../admin/use-collection";
import { api } from "../api";
import { ErrorAlert } from "../ui/error-alert";
import { PageSection, StateLabel, Subsection } from "../ui/page";
import { SlackCredentials, SlackUrls } from "./slack-credentials";
import { SlackLinksAdmin } from "./slack-links-admin";
import { SlackPolicy } from "./slack-policy";

// Admin → Integrations → Slack (docs/slack.md): the app's credentials, where Slack sends clicks, what may be
// done from Slack, and who acts as whom.

function Manifest({ settings }: { settings: SlackSettingsView }) {
  const manifest = slackAppManifest({
    interactivity: settings.interactivity_url,
    slashCommand: settings.slash_command_url,
  });
  return (
    <Subsection
      id="slack-manifest-heading"
      title="App manifest"
      aside={<CopyButton text={manifest} label="Copy manifest" />}
    >
      <p className="max-w-3xl text-sm text-slate-600">
        In Slack: Your Apps → Create New App → From a manifest, paste this, install the app to the workspace, then
        invite the bot to the channel it posts to (<span className="font-mono">/invite @Settle</span>).
      </p>
      <pre
        data-testid="slack-manifest"
        className="max-h-64 max-w-3xl overflow-auto rounded-md border border-slate-200 bg-slate-50 p-3 font-mono text-xs"
      >
        {manifest}
      </pre>
    </Subsection>
  );
}

export function SlackAdmin({ initial, links }: { initial: SlackSettingsView; links: SlackLinkInfo[] }) {
  const [notice, setNotice] = useState<string | null>(null);
  const { data: settings, error } = useCollection({
    queryKey: queryKeys.admin.slackSettings,
    queryFn: () => api.get("/api/v1/admin/integrations/slack"),
    initialData: initial,
  });
  return (
    <PageSection
      id="slack-heading"
      title="Slack app"
      notice={notice}
      description={
        <>
          A Slack app that posts approval requests and unknown outcomes with buttons, and takes the decision made there
          as the linked Settle person: approve, reject, found / not found with a note, escalate. Add a notification
          channel of kind <span className="font-mono">slack_app</span> under Notifications to choose what it posts
          where.
        </>
      }
      action={
        <span data-testid="slack-configured" className="text-sm">
          {settings.configured ? (
            <StateLabel state="set">up</StateLabel>
          ) : (
            <StateLabel state="not_set">up yet</StateLabel>
          )}
        </span>
      }
    >
      <ErrorAlert error={error} prefix="Could not refresh the settings:" />
      <SlackCredentials settings={settings} onSaved={setNotice} />
      <SlackUrls settings={settings} />
      <Manifest settings={settings} />
      <SlackPolicy policy={settings.actions} onSaved={setNotice} />
      <SlackLinksAdmin initial={links} onChanged={setNotice} />
    </PageSection>
  );
}
