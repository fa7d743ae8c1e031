import "server-only";
import type { Db } from "../db/client";
import { publicUrl } from "../env";
import { getInvocation } from "../invocations/read";
import type { TryResult } from "../webhooks/deliver";
import { printableSnippet } from "../webhooks/answer";
import { slackMessageFor, type SlackMessage } from "./blocks";
import { loadSlackApp } from "./settings";
import { callSlackApi, type SlackAnswer } from "./web-api";

// A `slack_app` notification channel posts through the app's bot (chat.postMessage), so its messages can be
// rewritten: an approval request or an unknown is one message per call with its bound buttons, remembered in
// slack_messages with the version it shows; once the call's version moves (a decision in Slack or in the
// console, a new report), the message is redrawn with chat.update — buttons while a person can still act,
// who decided what and when after.

const NOT_SET_UP =
  "The Slack app is not set up (PUT /api/v1/admin/integrations/slack, docs/slack.md), or its secrets cannot be read.";

function tryResult(answer: SlackAnswer, started: number): TryResult {
  return {
    statusCode: answer.status,
    error: answer.ok ? null : printableSnippet(`Slack: ${answer.error ?? "failed"}`),
    durationMs: Math.round(performance.now() - started),
    delivered: answer.ok,
  };
}

const notSent = (error: string): TryResult => ({ statusCode: null, error, durationMs: 0, delivered: false });

/** A digest (or any message without buttons) to a Slack channel through the bot. */
export async function postSlackMessage(db: Db, slackChannel: string, message: SlackMessage): Promise<TryResult> {
  const app = await loadSlackApp(db);
  if (!app) return notSent(NOT_SET_UP);
  const started = performance.now();
  return tryResult(await callSlackApi(app, "chat.postMessage", { channel: slackChannel, ...message }), started);
}

export type SlackCallTarget = {
  channelId: string;
  slackChannel: string;
  invocationId: string;
  runtime: string;
  event: string;
};

/** One call's message with its buttons, drawn as the call is when it is sent. */
export async function postSlackCallMessage(db: Db, target: SlackCallTarget): Promise<TryResult> {
  const app = await loadSlackApp(db);
  if (!app) return notSent(NOT_SET_UP);
  const view = await getInvocation(db, {}, target.invocationId, { runtime: target.runtime });
  // Deleted by retention meanwhile: nothing left to tell.
  if (!view) return { statusCode: null, error: null, durationMs: 0, delivered: true };
  const started = performance.now();
  const answer = await callSlackApi(app, "chat.postMessage", {
    channel: target.slackChannel,
    ...slackMessageFor(view, app.actions, publicUrl()),
  });
  if (answer.ok && typeof answer.body.ts === "string") {
    await db.driver.query(
      `INSERT INTO slack_messages (channel_id, invocation_uid, event, slack_channel, ts, drawn_version)
       SELECT $1::uuid, i.id, $4, $5, $6, $7 FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
        WHERE r.name = $2 AND i.invocation_id = $3
       ON CONFLICT (channel_id, invocation_uid, event) DO UPDATE SET slack_channel = $5, ts = $6, drawn_version = $7`,
      [
        target.channelId,
        target.runtime,
        target.invocationId,
        target.event,
        typeof answer.body.channel === "string" ? answer.body.channel : target.slackChannel,
        answer.body.ts,
        view.version,
      ],
    );
  }
  return tryResult(answer, started);
}

const REDRAW_BATCH = 50;

/** Redraws the messages whose call has moved since they were drawn; returns how many were rewritten. */
export async function redrawSlackMessages(db: Db): Promise<number> {
  const stale = await db.driver.query<{
    channel_id: string;
    invocation_uid: string;
    event: string;
    slack_channel: string;
    ts: string;
    invocation_id: string;
    runtime: string;
  }>(
    `SELECT m.channel_id::text AS channel_id, m.invocation_uid::text AS invocation_uid, m.event, m.slack_channel, m.ts,
            i.invocation_id, r.name AS runtime
       FROM slack_messages m JOIN invocations i ON i.id = m.invocation_uid JOIN runtimes r ON r.id = i.runtime_id
      WHERE m.ts IS NOT NULL AND i.version <> m.drawn_version
      ORDER BY m.created_at LIMIT $1`,
    [REDRAW_BATCH],
  );
  if (stale.length === 0) return 0;
  const app = await loadSlackApp(db);
  if (!app) return 0;
  let redrawn = 0;
  for (const m of stale) {
    const view = await getInvocation(db, {}, m.invocation_id, { runtime: m.runtime });
    if (!view) continue;
    const answer = await callSlackApi(app, "chat.update", {
      channel: m.slack_channel,
      ts: m.ts,
      ...slackMessageFor(view, app.actions, publicUrl()),
    });
    // A failed update is tried again at the next run: the version still differs.
    if (!answer.ok) continue;
    await db.driver.query(
      `UPDATE slack_messages SET drawn_version = $4 WHERE channel_id = $1::uuid AND invocation_uid = $2::uuid AND event = $3`,
      [m.channel_id, m.invocation_uid, m.event, view.version],
    );
    redrawn += 1;
  }
  return redrawn;
}
