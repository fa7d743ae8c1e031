import "server-only";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { deleteAudited, recordAdminAction } from "../audit/admin";
import { env } from "../env";
import { effectClasses } from "../outcome/queue-order";
import type { LookupFn } from "../webhooks/safe-url";
import { newWebhookSecret } from "../webhooks/signature";
import { assertSafeUrl, webhookUrlSchema } from "../webhooks/endpoints";
import { notificationEvents } from "./events";

// Notification channels: where people are told. Kept like webhook endpoints (the same URL rules, a
// signing secret answered once, every change audited with its before and after), but a channel belongs
// to no runtime: it picks runtimes by name, effect classes and events, each empty meaning all.

const time = z.string().meta({ format: "date-time" });
export const channelKinds = ["slack", "email", "slack_app"] as const;

const filters = {
  runtimes: z
    .array(z.string().trim().min(1).max(200))
    .max(50)
    .default([])
    .describe("Runtimes by name whose calls this channel hears of; empty: every runtime."),
  effect_classes: z
    .array(z.enum(effectClasses))
    .max(effectClasses.length)
    .default([])
    .describe("Effect classes it hears of; empty: every class, unclassified calls too."),
  events: z
    .array(z.enum(notificationEvents))
    .max(notificationEvents.length)
    .default([])
    .describe(
      "unknown (a new unknown or stalled call; one whose tool has a verifier only once verification ends without settling it), approval_needed, escalated (an SLA escalation), possible_duplicate; empty: all.",
    ),
  digest_s: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .default(60)
    .describe(
      "At most one message per this many seconds: what arrives meanwhile is one message naming the first few and the count. The first of a storm waits this long too.",
    ),
};

const slackChannelId = z
  .string()
  .trim()
  .regex(/^[CGD][A-Z0-9]{2,30}$/, "a Slack channel id (C…)")
  .describe("The Slack channel id (C…) the app's bot posts to; invite the bot there first (docs/slack.md).");

const emailAddress = z
  .string()
  .trim()
  .max(320)
  .pipe(z.email({ error: "an email address" }));

export const newNotificationChannelSchema = z
  .discriminatedUnion("kind", [
    z.object({
      kind: z.literal("slack"),
      url: webhookUrlSchema.describe(
        "A Slack (or compatible) incoming webhook: http or https, a public address unless the Settle server runs with SETTLE_WEBHOOK_ALLOW_PRIVATE=1.",
      ),
      ...filters,
    }),
    z.object({
      kind: z.literal("email"),
      to: z.array(emailAddress).min(1).max(20).describe("Who gets the email (SETTLE_SMTP_URL sends it)."),
      ...filters,
    }),
    z.object({
      kind: z.literal("slack_app"),
      channel: slackChannelId,
      ...filters,
    }),
  ])
  .meta({ id: "NewNotificationChannel" });
export type NewNotificationChannel = z.infer<typeof newNotificationChannelSchema>;

export const notificationChannelPatchSchema = z
  .object({
    url: webhookUrlSchema.optional(),
    to: z.array(emailAddress).min(1).max(20).optional(),
    channel: slackChannelId.optional(),
    runtimes: filters.runtimes.unwrap().optional(),
    effect_classes: filters.effect_classes.unwrap().optional(),
    events: filters.events.unwrap().optional(),
    digest_s: filters.digest_s.unwrap().optional(),
    enabled: z.boolean().optional().describe("A disabled channel collects nothing and sends nothing."),
  })
  .refine((p) => Object.values(p).some((v) => v !== undefined), "send at least one field")
  .meta({ id: "NotificationChannelPatch" });
export type NotificationChannelPatch = z.infer<typeof notificationChannelPatchSchema>;

export const notificationChannelSchema = z
  .object({
    id: z.string(),
    kind: z.enum(channelKinds),
    url: z.string().nullable().describe("Slack: the incoming webhook. null for email."),
    to: z.array(z.string()).describe("Email: the recipients. Empty for Slack."),
    channel: z
      .string()
      .nullable()
      .describe(
        "slack_app: the Slack channel id its bot posts to (an approval request or an unknown: one message per call, with buttons; the rest in digests). null otherwise.",
      ),
    runtimes: z.array(z.string()),
    effect_classes: z.array(z.enum(effectClasses)),
    events: z.array(z.enum(notificationEvents)),
    digest_s: z.number().int(),
    enabled: z.boolean(),
    waiting: z.number().int().describe("Calls collected for the next message."),
    messages: z.object({ pending: z.number().int(), delivered: z.number().int(), failed: z.number().int() }),
    last_message_at: time.nullable(),
    last_failure: z
      .object({
        at: time,
        status: z.enum(["pending", "failed"]).describe("pending: it will be tried again; failed: out of tries."),
        error: z.string(),
      })
      .nullable()
      .describe(
        "Why the last try of the latest message failed (a refused address, an HTTP status, the SMTP server's answer); null when it got through or none was tried yet.",
      ),
    created_at: time,
    updated_at: time,
  })
  .meta({ id: "NotificationChannel" });
export type NotificationChannelInfo = z.infer<typeof notificationChannelSchema>;

export const notificationChannelCreatedSchema = z
  .object({
    channel: notificationChannelSchema,
    secret: z
      .string()
      .describe(
        "whsec_…: shown this once. Each Slack-style message carries Settle-Signature for receivers that check it.",
      ),
  })
  .meta({ id: "NotificationChannelWithSecret" });

type ChannelRow = {
  id: string;
  kind: "slack" | "email" | "slack_app";
  url: string | null;
  slack_channel: string | null;
  email_to: string[] | null;
  runtimes: string[] | null;
  effect_classes: string[] | null;
  events: string[] | null;
  digest_s: number;
  enabled: boolean;
  waiting: number;
  pending: number;
  delivered: number;
  failed: number;
  last_message_at: string | null;
  failed_at: string | null;
  failure_status: "pending" | "failed" | "delivered" | null;
  failure: string | null;
  created_at: string;
  updated_at: string;
};

const SELECT_CHANNELS = `
  SELECT c.id::text AS id, c.kind, c.url, c.slack_channel, c.email_to, c.runtimes, c.effect_classes, c.events, c.digest_s, c.enabled,
         c.last_message_at, c.created_at, c.updated_at,
         (SELECT count(*) FROM notification_items i WHERE i.channel_id = c.id AND i.message_id IS NULL)::int AS waiting,
         COALESCE(m.pending, 0)::int AS pending, COALESCE(m.delivered, 0)::int AS delivered, COALESCE(m.failed, 0)::int AS failed,
         f.status AS failure_status, f.last_error AS failure, f.tried_at AS failed_at
    FROM notification_channels c
    LEFT JOIN LATERAL (
      SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
             count(*) FILTER (WHERE status = 'delivered') AS delivered,
             count(*) FILTER (WHERE status = 'failed') AS failed
        FROM webhook_deliveries WHERE channel_id = c.id
    ) m ON true
    -- The latest message that was tried, and when its last try was: shown on the channel's row when it failed.
    LEFT JOIN LATERAL (
      SELECT d.status, d.last_error, (SELECT max(a.at) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS tried_at
        FROM webhook_deliveries d WHERE d.channel_id = c.id AND d.attempts > 0
       ORDER BY d.created_at DESC, d.id DESC LIMIT 1
    ) f ON true`;

const iso = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());

function toInfo(row: ChannelRow): NotificationChannelInfo {
  return {
    id: row.id,
    kind: row.kind,
    url: row.url,
    to: row.email_to ?? [],
    channel: row.slack_channel,
    runtimes: row.runtimes ?? [],
    effect_classes: (row.effect_classes ?? []) as NotificationChannelInfo["effect_classes"],
    events: (row.events ?? []) as NotificationChannelInfo["events"],
    digest_s: row.digest_s,
    enabled: row.enabled,
    waiting: row.waiting,
    messages: { pending: row.pending, delivered: row.delivered, failed: row.failed },
    last_message_at: iso(row.last_message_at),
    last_failure:
      row.failure !== null &&
      row.failed_at !== null &&
      row.failure_status !== "delivered" &&
      row.failure_status !== null
        ? { at: iso(row.failed_at)!, status: row.failure_status, error: row.failure }
        : null,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

export async function listNotificationChannels(db: Db): Promise<NotificationChannelInfo[]> {
  return (await db.driver.query<ChannelRow>(`${SELECT_CHANNELS} ORDER BY c.created_at, c.id`)).map(toInfo);
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function getNotificationChannel(db: Db, id: string): Promise<NotificationChannelInfo> {
  const rows = uuid.test(id) ? await db.driver.query<ChannelRow>(`${SELECT_CHANNELS} WHERE c.id = $1::uuid`, [id]) : [];
  if (!rows[0]) throw new ApiError("NOT_FOUND", `No notification channel ${id}.`);
  return toInfo(rows[0]);
}

type SaveOptions = { lookup?: LookupFn };

async function assertRuntimesExist(db: Db, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const found = await db.driver.query<{ name: string }>(`SELECT name FROM runtimes WHERE name = ANY($1::text[])`, [
    [...names],
  ]);
  const missing = names.filter((n) => !found.some((f) => f.name === n));
  if (missing.length > 0)
    throw new ApiError(
      "INVALID_REQUEST",
      `No runtime ${missing.join(", ")}: a runtime exists once it has a key (Admin → Runtime keys).`,
      { path: "runtimes" },
    );
}

/** Whether email channels can be sent (SETTLE_SMTP_URL is set). */
export const emailConfigured = (): boolean => Boolean(env().SETTLE_SMTP_URL);

function assertEmailConfigured(): void {
  if (!emailConfigured())
    throw new ApiError(
      "INVALID_REQUEST",
      "Email channels need an SMTP server: set SETTLE_SMTP_URL (smtp://user:pass@host:587) and SETTLE_SMTP_FROM, then restart Settle.",
      { path: "kind" },
    );
}

/** What the audit keeps of a channel: never its secret. */
const snapshotOf = (c: NotificationChannelInfo) => ({
  kind: c.kind,
  url: c.url,
  to: c.to,
  channel: c.channel,
  runtimes: c.runtimes,
  effect_classes: c.effect_classes,
  events: c.events,
  digest_s: c.digest_s,
  enabled: c.enabled,
});

export async function createNotificationChannel(
  db: Db,
  input: NewNotificationChannel,
  actor: string,
  options: SaveOptions = {},
): Promise<{ channel: NotificationChannelInfo; secret: string }> {
  if (input.kind === "slack") await assertSafeUrl(input.url, "The channel's URL", options);
  else if (input.kind === "email") assertEmailConfigured();
  await assertRuntimesExist(db, input.runtimes);
  const secret = newWebhookSecret();
  const id = await db.driver.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO notification_channels (id, kind, url, email_to, secret, runtimes, effect_classes, events, digest_s, slack_channel)
       VALUES (gen_random_uuid(), $1, $2, $3::text[], $4, $5::text[], $6::text[], $7::text[], $8, $9) RETURNING id::text AS id`,
      [
        input.kind,
        input.kind === "slack" ? input.url : null,
        input.kind === "email" ? input.to : [],
        secret,
        input.runtimes,
        input.effect_classes,
        input.events,
        input.digest_s,
        input.kind === "slack_app" ? input.channel : null,
      ],
    );
    const created = (await tx.query<ChannelRow>(`${SELECT_CHANNELS} WHERE c.id = $1::uuid`, [row!.id])).map(toInfo)[0]!;
    await recordAdminAction(tx, {
      actor,
      action: "notification_channel_created",
      targetType: "notification_channel",
      targetId: row!.id,
      after: snapshotOf(created),
    });
    return row!.id;
  });
  return { channel: await getNotificationChannel(db, id), secret };
}

export async function updateNotificationChannel(
  db: Db,
  id: string,
  patch: NotificationChannelPatch,
  actor: string,
  options: SaveOptions = {},
): Promise<NotificationChannelInfo> {
  const before = await getNotificationChannel(db, id);
  if (patch.url !== undefined && before.kind !== "slack")
    throw new ApiError("INVALID_REQUEST", "An email channel has no URL: change `to`.", { path: "url" });
  if (patch.to !== undefined && before.kind !== "email")
    throw new ApiError("INVALID_REQUEST", "Only an email channel has recipients.", { path: "to" });
  if (patch.channel !== undefined && before.kind !== "slack_app")
    throw new ApiError("INVALID_REQUEST", "Only a slack_app channel has a Slack channel id.", { path: "channel" });
  if (patch.url !== undefined) await assertSafeUrl(patch.url, "The channel's URL", options);
  if (patch.runtimes) await assertRuntimesExist(db, patch.runtimes);
  await db.driver.transaction(async (tx) => {
    // null leaves a field as it is.
    const changed = await tx.query(
      `UPDATE notification_channels
          SET url = COALESCE($2, url), email_to = COALESCE($3::text[], email_to), runtimes = COALESCE($4::text[], runtimes),
              effect_classes = COALESCE($5::text[], effect_classes), events = COALESCE($6::text[], events),
              digest_s = COALESCE($7, digest_s), enabled = COALESCE($8, enabled),
              slack_channel = COALESCE($9, slack_channel), updated_at = now()
        WHERE id = $1::uuid RETURNING id`,
      [
        id,
        patch.url ?? null,
        patch.to ?? null,
        patch.runtimes ?? null,
        patch.effect_classes ?? null,
        patch.events ?? null,
        patch.digest_s ?? null,
        patch.enabled ?? null,
        patch.channel ?? null,
      ],
    );
    if (changed.length === 0) throw new ApiError("NOT_FOUND", `No notification channel ${id}.`);
    const after = (await tx.query<ChannelRow>(`${SELECT_CHANNELS} WHERE c.id = $1::uuid`, [id])).map(toInfo)[0]!;
    await recordAdminAction(tx, {
      actor,
      action: "notification_channel_updated",
      targetType: "notification_channel",
      targetId: id,
      before: snapshotOf(before),
      after: snapshotOf(after),
    });
  });
  return getNotificationChannel(db, id);
}

/** Deletes the channel with what waits for it and its messages' log. */
export async function deleteNotificationChannel(db: Db, id: string, actor: string): Promise<{ deleted: true }> {
  const before = await getNotificationChannel(db, id);
  const deleted = await deleteAudited(db, "notification_channels", {
    actor,
    action: "notification_channel_deleted",
    targetType: "notification_channel",
    targetId: id,
    before: snapshotOf(before),
  });
  if (!deleted) throw new ApiError("NOT_FOUND", `No notification channel ${id}.`);
  return { deleted: true };
}
