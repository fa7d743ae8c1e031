import { json, otherMethods, withRoute } from "@/lib/http/route";
import { itemsOf } from "@/lib/http/schemas";
import {
  createNotificationChannel,
  listNotificationChannels,
  newNotificationChannelSchema,
  notificationChannelCreatedSchema,
  notificationChannelSchema,
} from "@/lib/notifications/channels";

// Where people are told: Slack-compatible webhooks and email, each with its runtimes, classes, events and digest.
export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Notification channels, without secrets (admins)",
  tags: ["Notifications"],
  response: itemsOf(notificationChannelSchema),
  handler: async ({ db }) => ({ items: await listNotificationChannels(db) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "webhooks",
  summary:
    "Add a notification channel (admins): Slack-compatible webhook or email; its signing secret is answered once",
  tags: ["Notifications"],
  errors: ["UNSAFE_URL"],
  response: { 201: notificationChannelCreatedSchema },
  body: newNotificationChannelSchema,
  handler: async ({ db, body, principal }) =>
    json(await createNotificationChannel(db, body, principal.user.email), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
