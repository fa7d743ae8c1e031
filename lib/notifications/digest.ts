import "server-only";
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import type { Tx } from "../db/driver";
import { publicUrl } from "../env";
import type { NotificationEvent } from "./events";
import { buildDigest, DIGEST_NAMES, type NoticeFacts } from "./message";

// A storm is one message: a channel's collected items go out together once the oldest has waited the
// channel's digest_s, as one delivery in the webhook outbox (signed, retried with back-off, logged, resent
// like any other). The channel row is locked while its digest is made, so two instances never split one.
// A slack_app channel's approval requests and unknowns are the exception: one message each, with buttons.

export const DIGEST_EVENT = "notification.digest";
/** A slack_app channel's message about one call (lib/slack/channel.ts), with its buttons. */
export const SLACK_CALL_EVENT = "notification.slack_call";
/** What a slack_app channel tells one message per call, with buttons; its other events keep their digests. */
const ONE_PER_CALL: readonly NotificationEvent[] = ["approval_needed", "unknown"];

export type SlackCallMessage = {
  id: string;
  type: typeof SLACK_CALL_EVENT;
  channel_id: string;
  slack_channel: string;
  invocation_id: string;
  runtime: string;
  event: NotificationEvent;
};

const INSERT_MESSAGE = `
  INSERT INTO webhook_deliveries (id, channel_id, event_id, event_type, payload, status, next_attempt_at, created_at)
  VALUES ($1::uuid, $2::uuid, $3, $4, $5::jsonb, 'pending', $6::timestamptz, $6::timestamptz)`;

/** A slack_app channel's approval requests and unknowns, each its own message; returns how many. */
async function composeCallMessages(tx: Tx, channelId: string, slackChannel: string, at: string): Promise<number> {
  const items = await tx.query<{ id: string; facts: NoticeFacts }>(
    `SELECT id::text AS id, facts FROM notification_items
      WHERE channel_id = $1::uuid AND message_id IS NULL AND created_at <= $2::timestamptz AND event = ANY($3::text[])
      ORDER BY id`,
    [channelId, at, [...ONE_PER_CALL]],
  );
  for (const item of items) {
    const messageId = randomUUID();
    const message: SlackCallMessage = {
      id: `ntf_${messageId.replaceAll("-", "")}`,
      type: SLACK_CALL_EVENT,
      channel_id: channelId,
      slack_channel: slackChannel,
      invocation_id: item.facts.invocation_id,
      runtime: item.facts.runtime,
      event: item.facts.event,
    };
    await tx.query(INSERT_MESSAGE, [messageId, channelId, message.id, SLACK_CALL_EVENT, JSON.stringify(message), at]);
    await tx.query(`UPDATE notification_items SET message_id = $3::uuid WHERE channel_id = $1::uuid AND id = $2`, [
      channelId,
      item.id,
      messageId,
    ]);
  }
  return items.length;
}

const DUE = `
  SELECT c.id::text AS id FROM notification_channels c
   WHERE c.enabled AND EXISTS (
     SELECT 1 FROM notification_items i
      WHERE i.channel_id = c.id AND i.message_id IS NULL
        AND i.created_at <= $1::timestamptz - make_interval(secs => c.digest_s))`;

async function composeOne(db: Db, channelId: string, now: Date): Promise<boolean> {
  return db.driver.transaction(async (tx) => {
    const [locked] = await tx.query<{ kind: string; slack_channel: string | null }>(
      `SELECT kind, slack_channel FROM notification_channels WHERE id = $1::uuid AND enabled FOR UPDATE SKIP LOCKED`,
      [channelId],
    );
    if (!locked) return false;
    const at = now.toISOString();
    const calls =
      locked.kind === "slack_app" && locked.slack_channel
        ? await composeCallMessages(tx, channelId, locked.slack_channel, at)
        : 0;
    const counts = await tx.query<{ event: NotificationEvent; n: number }>(
      `SELECT event, count(*)::int AS n FROM notification_items
        WHERE channel_id = $1::uuid AND message_id IS NULL AND created_at <= $2::timestamptz GROUP BY event`,
      [channelId, at],
    );
    if (counts.length === 0) {
      if (calls > 0)
        await tx.query(`UPDATE notification_channels SET last_message_at = $2::timestamptz WHERE id = $1::uuid`, [
          channelId,
          at,
        ]);
      return calls > 0;
    }
    const named = await tx.query<{ facts: NoticeFacts }>(
      `SELECT facts FROM notification_items
        WHERE channel_id = $1::uuid AND message_id IS NULL AND created_at <= $2::timestamptz ORDER BY id LIMIT $3`,
      [channelId, at, DIGEST_NAMES],
    );
    const messageId = randomUUID();
    const digest = buildDigest(
      `ntf_${messageId.replaceAll("-", "")}`,
      now,
      named.map((r) => r.facts),
      Object.fromEntries(counts.map((c) => [c.event, c.n])),
      `${publicUrl()}/`,
    );
    // A slack_app channel's digest goes through its bot, to its channel.
    const queued = locked.kind === "slack_app" ? { ...digest, slack_channel: locked.slack_channel } : digest;
    await tx.query(INSERT_MESSAGE, [messageId, channelId, digest.id, DIGEST_EVENT, JSON.stringify(queued), at]);
    await tx.query(
      `UPDATE notification_items SET message_id = $3::uuid
        WHERE channel_id = $1::uuid AND message_id IS NULL AND created_at <= $2::timestamptz`,
      [channelId, at, messageId],
    );
    await tx.query(`UPDATE notification_channels SET last_message_at = $2::timestamptz WHERE id = $1::uuid`, [
      channelId,
      at,
    ]);
    return true;
  });
}

/** Makes each due channel's message; returns how many were queued. */
export async function composeDigests(db: Db, now: Date): Promise<number> {
  const due = await db.driver.query<{ id: string }>(DUE, [now.toISOString()]);
  let made = 0;
  for (const { id } of due) if (await composeOne(db, id, now)) made += 1;
  return made;
}
