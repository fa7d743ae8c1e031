"use client";

import { useState } from "react";
import { CopyButton } from "../admin/copy-button";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/error-alert";
import { useMutation } from "@tanstack/react-query";

// The other way to link: Settle shows a one-time code, the person types `/settle link CODE` in Slack, and the
// Slack user who typed it is linked (lib/slack/commands.ts). The page watches the list of links meanwhile.

export type CommandCode = { code: string; command: string; expires_at: string };

export function CommandCodeStep({
  box,
  shown,
  onShown,
}: {
  box: string;
  shown: CommandCode | null;
  onShown: (code: CommandCode | null) => void;
}) {
  const [asked, setAsked] = useState(false);
  const issue = useMutation({
    mutationFn: () => api.post("/api/v1/me/slack-links/command-code"),
    onSuccess: (code) => {
      setAsked(true);
      onShown(code);
    },
  });
  return (
    <div className={box} data-testid="slack-command-step">
      <h3 className="text-sm font-medium text-slate-800">Or type a command in Slack</h3>
      {shown ? (
        <>
          <p className="text-sm text-slate-700">
            In Slack, in any channel or a direct message, type this before{" "}
            {formatUtc(shown.expires_at, { seconds: false })}. It works once. Type it yourself: whoever sends it links
            their Slack user to you.
          </p>
          <div className="flex items-center gap-2">
            <code
              data-testid="slack-command"
              className="min-w-0 flex-1 break-all rounded-md border border-slate-200 bg-slate-50 px-3 py-1.5 font-mono text-sm"
            >
              {shown.command}
            </code>
            <CopyButton text={shown.command} label="Copy command" />
          </div>
          <p className="text-xs text-slate-500" role="status">
            Waiting for Slack… this page shows the link as soon as it is made.
          </p>
          <Button size="sm" variant="ghost" onClick={() => onShown(null)}>
            Hide the code
          </Button>
        </>
      ) : (
        <>
          <p className="text-sm text-slate-700">
            Settle shows you a one-time code; you type <span className="font-mono">/settle link</span> and the code in
            Slack. Needs the app&apos;s <span className="font-mono">/settle</span> command (an admin adds it with the
            manifest).
          </p>
          <ErrorAlert error={issue.error} look="box" />
          <Button onClick={() => issue.mutate()} disabled={issue.isPending}>
            {issue.isPending ? "Making a code…" : asked ? "Show me a new code" : "Show me a code"}
          </Button>
        </>
      )}
    </div>
  );
}
