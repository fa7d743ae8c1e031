import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { webhookDeliverySchema } from "@/lib/webhooks/deliveries";
import { resendChannelMessage } from "@/lib/notifications/messages";

export const POST = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Send a notification message again from the start; records who asked (admins)",
  tags: ["Notifications"],
  errors: ["NOT_FOUND"],
  response: webhookDeliverySchema,
  params: z.object({ channel_id: z.string(), message_id: z.string() }),
  handler: async ({ db, params, principal }) =>
    resendChannelMessage(db, params.channel_id, params.message_id, principal.user.email),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
