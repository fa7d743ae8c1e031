import "server-only";
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import { publicUrl } from "../env";
import type { NotificationEvent } from "./events";
import { buildDigest, DIGEST_NAMES, type NoticeFacts } from "./message";

// A storm is one message: a channel's collected items go out together once the oldest has waited the
// channel's digest_s, as one delivery in the webhook outbox (signed, retried with back-off, logged, resent
// like any other). The channel row is locked while its digest is made, so two instances never split one.

export const DIGEST_EVENT = "notification.digest";

const DUE = `
  SELECT c.id::text AS id FROM notification_channels c
   WHERE c.enabled AND EXISTS (
     SELECT 1 FROM notification_items i
      WHERE i.channel_id = c.id AND i.message_id IS NULL
        AND i.created_at <= $1::timestamptz - make_interval(secs => c.digest_s))`;

async function composeOne(db: Db, channelId: string, now: Date): Promise<boolean> {
  return db.driver.transaction(async (tx) => {
    const locked = await tx.query(
      `SELECT id FROM notification_channels WHERE id = $1::uuid AND enabled FOR UPDATE SKIP LOCKED`,
      [channelId],
    );
    if (locked.length === 0) return false;
    const at = now.toISOString();
    const counts = await tx.query<{ event: NotificationEvent; n: number }>(
      `SELECT event, count(*)::int AS n FROM notification_items
        WHERE channel_id = $1::uuid AND message_id IS NULL AND created_at <= $2::timestamptz GROUP BY event`,
      [channelId, at],
    );
    if (counts.length === 0) return false;
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
    await tx.query(
      `INSERT INTO webhook_deliveries (id, channel_id, event_id, event_type, payload, status, next_attempt_at, created_at)
       VALUES ($1::uuid, $2::uuid, $3, $4, $5::jsonb, 'pending', $6::timestamptz, $6::timestamptz)`,
      [messageId, channelId, digest.id, DIGEST_EVENT, JSON.stringify(digest), at],
    );
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
