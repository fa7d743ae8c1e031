import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { recordAdminAction } from "../audit/admin";
import { decodeTimeIdCursor, encodeTimeIdCursor, type TimeIdCursor } from "../db/cursor";
import { bodyOf } from "./body";
import { getWebhookEndpoint } from "./endpoints";
import { webhookEventTypes } from "./events";
import { OTLP_EVENT_TYPE } from "./otlp-outcomes";

// The delivery log: what went to an endpoint, how each try went, and the
// Resend button, which starts a delivery over (pending now, a fresh set of
// attempts) and records who asked. The attempt log keeps every earlier try.

const time = z.string().meta({ format: "date-time" });
export const deliveryStatuses = ["pending", "delivered", "failed"] as const;
/**
 * What the outbox sends: runtimes' webhook events, OTLP destinations' spans (otlp-outcomes.ts), and notification
 * channels' digests (lib/notifications).
 */
export const deliveryEventTypes = [...webhookEventTypes, OTLP_EVENT_TYPE, "notification.digest"] as const;

/** Whose deliveries: a webhook endpoint's, or a notification channel's messages. */
export type DeliveryOwner = { endpointId: string } | { channelId: string };
const ownerWhere = (owner: DeliveryOwner) =>
  "endpointId" in owner ? { endpointId: owner.endpointId } : { channelId: owner.channelId };
const ownerName = (owner: DeliveryOwner) =>
  "endpointId" in owner ? `webhook endpoint ${owner.endpointId}` : `notification channel ${owner.channelId}`;

export const webhookDeliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string().describe("Also sent as Settle-Event-Id: the same event to several endpoints has one id."),
    event_type: z.enum(deliveryEventTypes),
    invocation_id: z.string().nullable(),
    status: z.enum(deliveryStatuses),
    attempts: z.number().int().describe("Tries since the delivery was created or last resent."),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: time.nullable().describe("When the next try is due; null once delivered or failed."),
    created_at: time,
    delivered_at: time.nullable(),
    resent_by: z.string().nullable(),
    resent_at: time.nullable(),
  })
  .meta({ id: "WebhookDelivery" });
export type WebhookDeliveryInfo = z.infer<typeof webhookDeliverySchema>;

export const webhookAttemptSchema = z
  .object({
    at: time,
    status_code: z.number().int().nullable().describe("null: no HTTP answer (refused, timed out)."),
    error: z.string().nullable(),
    duration_ms: z.number().int(),
  })
  .meta({ id: "WebhookAttempt" });

export const webhookDeliveryDetailSchema = z
  .object({
    delivery: webhookDeliverySchema,
    payload: z.record(z.string(), z.unknown()).describe("The event, as sent in the body."),
    attempts: z.array(webhookAttemptSchema).describe("Every try, newest first."),
  })
  .meta({ id: "WebhookDeliveryDetail" });
export type WebhookDeliveryDetail = z.infer<typeof webhookDeliveryDetailSchema>;

export const webhookDeliveryPageSchema = z
  .object({ items: z.array(webhookDeliverySchema), next_cursor: z.string().nullable() })
  .meta({ id: "WebhookDeliveryPage" });
export type WebhookDeliveryPage = z.infer<typeof webhookDeliveryPageSchema>;

const encodeCursor = (c: TimeIdCursor) => encodeTimeIdCursor(c.at, c.id);
const decodeCursor = decodeTimeIdCursor;

export const deliveryQuerySchema = z.object({
  status: z.enum(deliveryStatuses).optional().describe("Only deliveries in this state."),
  cursor: z
    .string()
    .optional()
    .refine(
      (c) => c === undefined || decodeCursor(c) !== null,
      "not a cursor from this API: pass next_cursor as it was given",
    ),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type DeliveryQuery = z.infer<typeof deliveryQuerySchema>;

type DeliveryRow = {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date;
  createdAt: Date;
  deliveredAt: Date | null;
  resentBy: string | null;
  resentAt: Date | null;
  payload: unknown;
};

/** The invocation a delivery is about: a webhook event names it in its data, an OTLP span's facts at the top. */
function invocationIdOf(eventType: string, payload: unknown): string | null {
  const facts = eventType === OTLP_EVENT_TYPE ? payload : (payload as { data?: unknown } | null)?.data;
  const id = (facts as { invocation_id?: unknown } | null | undefined)?.invocation_id;
  return typeof id === "string" ? id : null;
}

function toInfo(row: DeliveryRow): WebhookDeliveryInfo {
  return {
    id: row.id,
    event_id: row.eventId,
    event_type: row.eventType as WebhookDeliveryInfo["event_type"],
    invocation_id: invocationIdOf(row.eventType, row.payload),
    status: row.status as WebhookDeliveryInfo["status"],
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    next_attempt_at: row.status === "pending" ? row.nextAttemptAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    delivered_at: row.deliveredAt?.toISOString() ?? null,
    resent_by: row.resentBy,
    resent_at: row.resentAt?.toISOString() ?? null,
  };
}

/** One endpoint's deliveries, newest first. */
export async function listWebhookDeliveries(
  db: Db,
  endpointId: string,
  query: DeliveryQuery,
): Promise<WebhookDeliveryPage> {
  await getWebhookEndpoint(db, endpointId);
  return listDeliveries(db, { endpointId }, query);
}

/** An endpoint's or a channel's deliveries, newest first; the caller has checked the owner exists. */
export async function listDeliveries(db: Db, owner: DeliveryOwner, query: DeliveryQuery): Promise<WebhookDeliveryPage> {
  const cursor = query.cursor ? decodeCursor(query.cursor) : null;
  const rows = await db.prisma.webhookDelivery.findMany({
    where: {
      ...ownerWhere(owner),
      ...(query.status ? { status: query.status } : {}),
      ...(cursor ? { OR: [{ createdAt: { lt: cursor.at } }, { createdAt: cursor.at, id: { lt: cursor.id } }] } : {}),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    items: page.map(toInfo),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ at: last.createdAt, id: last.id }) : null,
  };
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function findDelivery(db: Db, owner: DeliveryOwner, deliveryId: string) {
  const ownerId = "endpointId" in owner ? owner.endpointId : owner.channelId;
  const row =
    uuid.test(ownerId) && uuid.test(deliveryId)
      ? await db.prisma.webhookDelivery.findFirst({ where: { id: deliveryId, ...ownerWhere(owner) } })
      : null;
  if (!row) throw new ApiError("NOT_FOUND", `No delivery ${deliveryId} for ${ownerName(owner)}.`);
  return row;
}

export async function getWebhookDelivery(
  db: Db,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDeliveryDetail> {
  return getDelivery(db, { endpointId }, deliveryId);
}

export async function getDelivery(db: Db, owner: DeliveryOwner, deliveryId: string): Promise<WebhookDeliveryDetail> {
  const row = await findDelivery(db, owner, deliveryId);
  const attempts = await db.prisma.webhookAttempt.findMany({
    where: { deliveryId },
    orderBy: [{ at: "desc" }, { id: "desc" }],
  });
  return {
    delivery: toInfo(row),
    // In the order it is sent (the outbox's jsonb keeps its own key order).
    payload: JSON.parse(bodyOf(row.payload)) as Record<string, unknown>,
    attempts: attempts.map((a) => ({
      at: a.at.toISOString(),
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
    })),
  };
}

/**
 * Sends a delivery again from the start: pending now, its attempt count back to
 * zero so it gets the whole back-off schedule. A try already in flight keeps its
 * claim (locked_until), so pressing Resend never makes two instances send at once.
 */
export async function resendWebhookDelivery(
  db: Db,
  endpointId: string,
  deliveryId: string,
  actor: string,
  now = new Date(),
): Promise<WebhookDeliveryInfo> {
  return resendDelivery(db, { endpointId }, deliveryId, actor, now);
}

export async function resendDelivery(
  db: Db,
  owner: DeliveryOwner,
  deliveryId: string,
  actor: string,
  now = new Date(),
): Promise<WebhookDeliveryInfo> {
  const before = await findDelivery(db, owner, deliveryId);
  const endpoint = "endpointId" in owner;
  await db.driver.transaction(async (tx) => {
    // The column is chosen from two fixed names, never from the request.
    const resent = await tx.query(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $3::timestamptz, resent_by = $4, resent_at = $3::timestamptz
        WHERE id = $1::uuid AND ${endpoint ? "endpoint_id" : "channel_id"} = $2::uuid RETURNING id`,
      [deliveryId, endpoint ? owner.endpointId : owner.channelId, now.toISOString(), actor],
    );
    if (resent.length === 0) throw new ApiError("NOT_FOUND", `No delivery ${deliveryId} for ${ownerName(owner)}.`);
    const snapshot = (d: Pick<typeof before, "eventId" | "eventType" | "status" | "attempts">) => ({
      ...(endpoint ? { endpoint_id: owner.endpointId } : { channel_id: owner.channelId }),
      event_id: d.eventId,
      event_type: d.eventType,
      status: d.status,
      attempts: d.attempts,
    });
    await recordAdminAction(tx, {
      actor,
      action: endpoint ? "webhook_delivery_resent" : "notification_message_resent",
      targetType: "webhook_delivery",
      targetId: deliveryId,
      before: snapshot(before),
      after: snapshot({ ...before, status: "pending", attempts: 0 }),
    });
  });
  return toInfo(await findDelivery(db, owner, deliveryId));
}
