import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { deliveryQuerySchema, listWebhookDeliveries, webhookDeliveryPageSchema } from "@/lib/webhooks/deliveries";

// An endpoint's delivery log, newest first.
export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "An endpoint's delivery log, newest first (admins)",
  tags: ["Webhooks"],
  errors: ["NOT_FOUND"],
  response: webhookDeliveryPageSchema,
  params: z.object({ endpoint_id: z.string() }),
  query: deliveryQuerySchema,
  handler: async ({ db, params, query }) => listWebhookDeliveries(db, params.endpoint_id, query),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
