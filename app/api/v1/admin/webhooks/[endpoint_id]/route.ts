import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import {
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  webhookEndpointPatchSchema,
  webhookEndpointSchema,
} from "@/lib/webhooks/endpoints";
import { deletedSchema } from "@/lib/http/schemas";

const params = z.object({ endpoint_id: z.string() });

// One webhook endpoint (no secret).
export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "One webhook endpoint (admins)",
  tags: ["Webhooks"],
  errors: ["NOT_FOUND"],
  response: webhookEndpointSchema,
  params,
  handler: async ({ db, params }) => getWebhookEndpoint(db, params.endpoint_id),
});

// Change its URL (refused with UNSAFE_URL when it reaches a private address), enable / disable it, or replace an
// OTLP destination's headers (answered by name only).
export const PATCH = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Change a webhook endpoint's URL or an OTLP destination's headers, or enable / disable it (admins)",
  tags: ["Webhooks"],
  errors: ["NOT_FOUND", "UNSAFE_URL"],
  response: webhookEndpointSchema,
  params,
  body: webhookEndpointPatchSchema,
  handler: async ({ db, params, body, principal }) =>
    updateWebhookEndpoint(db, params.endpoint_id, body, principal.user.email),
});

// Delete it with its deliveries and their log.
export const DELETE = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Delete a webhook endpoint with its deliveries (admins)",
  tags: ["Webhooks"],
  errors: ["NOT_FOUND"],
  response: deletedSchema,
  params,
  handler: async ({ db, params, principal }) => deleteWebhookEndpoint(db, params.endpoint_id, principal.user.email),
});

export const { POST, PUT } = otherMethods("GET", "PATCH", "DELETE");
