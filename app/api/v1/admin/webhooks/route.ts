import { json, otherMethods, withRoute } from "@/lib/http/route";
import { createWebhookEndpoint, listWebhookEndpoints, newWebhookEndpointSchema } from "@/lib/webhooks/endpoints";

// Runtimes' webhook endpoints: listed without secrets; created with the secret answered once.
export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  handler: async ({ db }) => ({ items: await listWebhookEndpoints(db) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "webhooks",
  body: newWebhookEndpointSchema,
  handler: async ({ db, body, principal }) => json(await createWebhookEndpoint(db, body, principal.user.email), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
