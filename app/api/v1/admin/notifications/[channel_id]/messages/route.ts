import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { deliveryQuerySchema, webhookDeliveryPageSchema } from "@/lib/webhooks/deliveries";
import { listChannelMessages } from "@/lib/notifications/messages";

export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "A notification channel's messages (digests), newest first (admins)",
  tags: ["Notifications"],
  errors: ["NOT_FOUND"],
  response: webhookDeliveryPageSchema,
  params: z.object({ channel_id: z.string() }),
  query: deliveryQuerySchema,
  handler: async ({ db, params, query }) => listChannelMessages(db, params.channel_id, query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
