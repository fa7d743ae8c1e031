import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { deletedSchema } from "@/lib/http/schemas";
import {
  deleteNotificationChannel,
  getNotificationChannel,
  notificationChannelPatchSchema,
  notificationChannelSchema,
  updateNotificationChannel,
} from "@/lib/notifications/channels";

const params = z.object({ channel_id: z.string() });

export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "One notification channel (admins)",
  tags: ["Notifications"],
  errors: ["NOT_FOUND"],
  response: notificationChannelSchema,
  params,
  handler: async ({ db, params }) => getNotificationChannel(db, params.channel_id),
});

export const PATCH = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Change a channel's URL or recipients, what it hears of, its digest, or enable / disable it (admins)",
  tags: ["Notifications"],
  errors: ["NOT_FOUND", "UNSAFE_URL"],
  response: notificationChannelSchema,
  params,
  body: notificationChannelPatchSchema,
  handler: async ({ db, params, body, principal }) =>
    updateNotificationChannel(db, params.channel_id, body, principal.user.email),
});

export const DELETE = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Delete a notification channel with its messages (admins)",
  tags: ["Notifications"],
  errors: ["NOT_FOUND"],
  response: deletedSchema,
  params,
  handler: async ({ db, params, principal }) => deleteNotificationChannel(db, params.channel_id, principal.user.email),
});

export const { POST, PUT } = otherMethods("GET", "PATCH", "DELETE");
