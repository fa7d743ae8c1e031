import { json, otherMethods, withRoute } from "@/lib/http/route";
import {
  createWebhookEndpoint,
  listWebhookEndpoints,
  newWebhookEndpointSchema,
  webhookEndpointSchema,
  webhookSecretAnswerSchema,
} from "@/lib/webhooks/endpoints";
import { itemsOf } from "@/lib/http/schemas";

// Runtimes' webhook endpoints: listed without secrets; created with the secret answered once.
export const GET = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Runtimes' webhook endpoints, without secrets (admins)",
  tags: ["Webhooks"],
  response: itemsOf(webhookEndpointSchema),
  handler: async ({ db }) => ({ items: await listWebhookEndpoints(db) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "webhooks",
  summary: "Add a webhook endpoint to a runtime (admins); its signing secret is answered once",
  tags: ["Webhooks"],
  errors: ["UNSAFE_URL"],
  response: { 201: webhookSecretAnswerSchema },
  body: newWebhookEndpointSchema,
  handler: async ({ db, body, principal }) => json(await createWebhookEndpoint(db, body, principal.user.email), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
