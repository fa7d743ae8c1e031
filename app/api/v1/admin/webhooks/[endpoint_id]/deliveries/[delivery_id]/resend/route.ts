import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { resendWebhookDelivery, webhookDeliverySchema } from "@/lib/webhooks/deliveries";

// Send a delivery again from the start (pending now); records who asked.
export const POST = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Send a delivery again from the start: pending now, a fresh set of attempts; records who asked (admins)",
  tags: ["Webhooks"],
  errors: ["NOT_FOUND"],
  response: webhookDeliverySchema,
  params: z.object({ endpoint_id: z.string(), delivery_id: z.string() }),
  handler: async ({ db, params, principal }) =>
    resendWebhookDelivery(db, params.endpoint_id, params.delivery_id, principal.user.email),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
