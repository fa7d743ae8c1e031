import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { webhookDeliveryDetailSchema } from "@/lib/webhooks/deliveries";
import { getChannelMessage } from "@/lib/notifications/messages";

export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "One notification message with its digest and every try (admins)",
  tags: ["Notifications"],
  errors: ["NOT_FOUND"],
  response: webhookDeliveryDetailSchema,
  params: z.object({ channel_id: z.string(), message_id: z.string() }),
  handler: async ({ db, params }) => getChannelMessage(db, params.channel_id, params.message_id),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
