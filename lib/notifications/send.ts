import "server-only";
import nodemailer, { type Transporter } from "nodemailer";
import { env } from "../env";
import { processWide } from "../process-wide";
import type { ChannelSender, TryResult } from "../webhooks/deliver";
import { printableSnippet } from "../webhooks/answer";
import type { Db } from "../db/client";
import { postSlackCallMessage, postSlackMessage } from "../slack/channel";
import { SLACK_CALL_EVENT, type SlackCallMessage } from "./digest";
import { renderEmail, renderSlack, type Digest } from "./message";

// How a channel's message leaves: Slack's as a Block Kit POST through the webhook sender (checked address,
// signed, timed), email over SMTP (SETTLE_SMTP_URL) as plain text. Either way the outbox logs the try and
// retries it with back-off.

const transports = processWide("smtpTransports", () => new Map<string, Transporter>());

function transportFor(url: string): Transporter {
  let transport = transports.get(url);
  if (!transport) {
    transport = nodemailer.createTransport({
      url,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    transports.set(url, transport);
  }
  return transport;
}

async function sendEmail(to: readonly string[], digest: Digest, now: Date): Promise<TryResult> {
  const settings = env();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (!settings.SETTLE_SMTP_URL)
    return {
      statusCode: null,
      error: "SETTLE_SMTP_URL is not set: email cannot be sent.",
      durationMs: 0,
      delivered: false,
    };
  const message = renderEmail(digest, now);
  try {
    await transportFor(settings.SETTLE_SMTP_URL).sendMail({
      from: settings.SETTLE_SMTP_FROM,
      to: [...to],
      subject: message.subject,
      text: message.text,
      headers: { "Settle-Event-Id": digest.id },
    });
    return { statusCode: null, error: null, durationMs: elapsed(), delivered: true };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    return { statusCode: null, error: printableSnippet(`SMTP: ${text}`), durationMs: elapsed(), delivered: false };
  }
}

// Rendered at each try, so a message that waited (a receiver down, a refused address) says how long each call
// has waited when it is read, not when the digest was composed.
export const sendChannelMessage: ChannelSender = async (message, post, now) => {
  const digest = message.payload as Digest;
  if (message.kind === "email") return sendEmail(message.to, digest, now);
  return post(JSON.stringify(renderSlack(digest, now)));
};

/**
 * The sender with the database a slack_app channel needs (its bot token, the call as it is now): its calls go
 * one message each with buttons (lib/slack/channel.ts), its digests through the bot like any other message.
 */
export function channelSenderFor(db: Db): ChannelSender {
  return async (message, post, now) => {
    if (message.kind !== "slack_app") return sendChannelMessage(message, post, now);
    const payload = message.payload as SlackCallMessage | (Digest & { slack_channel?: string });
    if (payload.type === SLACK_CALL_EVENT) {
      const call = payload as SlackCallMessage;
      return postSlackCallMessage(db, {
        channelId: call.channel_id,
        slackChannel: call.slack_channel,
        invocationId: call.invocation_id,
        runtime: call.runtime,
        event: call.event,
      });
    }
    const digest = payload as Digest & { slack_channel?: string };
    return postSlackMessage(db, digest.slack_channel ?? "", renderSlack(digest, now));
  };
}
