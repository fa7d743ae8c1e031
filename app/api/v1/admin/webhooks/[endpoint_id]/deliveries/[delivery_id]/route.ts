import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { getWebhookDelivery, webhookDeliveryDetailSchema } from "@/lib/webhooks/deliveries";

// One delivery: its payload and every try.
export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "One delivery with its payload and every try (admins)",
  tags: ["Webhooks"],
  errors: ["NOT_FOUND"],
  response: webhookDeliveryDetailSchema,
  params: z.object({ endpoint_id: z.string(), delivery_id: z.string() }),
  handler: async ({ db, params }) => getWebhookDelivery(db, params.endpoint_id, params.delivery_id),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
