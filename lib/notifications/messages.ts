import "server-only";
import type { Db } from "../db/client";
import {
  getDelivery,
  listDeliveries,
  resendDelivery,
  type DeliveryQuery,
  type WebhookDeliveryDetail,
  type WebhookDeliveryInfo,
  type WebhookDeliveryPage,
} from "../webhooks/deliveries";
import { getNotificationChannel } from "./channels";

// A channel's messages are outbox deliveries: the same log, tries and Resend as a webhook endpoint's.

export async function listChannelMessages(
  db: Db,
  channelId: string,
  query: DeliveryQuery,
): Promise<WebhookDeliveryPage> {
  await getNotificationChannel(db, channelId);
  return listDeliveries(db, { channelId }, query);
}

export async function getChannelMessage(db: Db, channelId: string, messageId: string): Promise<WebhookDeliveryDetail> {
  return getDelivery(db, { channelId }, messageId);
}

export async function resendChannelMessage(
  db: Db,
  channelId: string,
  messageId: string,
  actor: string,
): Promise<WebhookDeliveryInfo> {
  return resendDelivery(db, { channelId }, messageId, actor);
}
