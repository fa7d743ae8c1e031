import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { rotateWebhookSecret, webhookSecretAnswerSchema } from "@/lib/webhooks/endpoints";

// A new signing secret, answered once; it signs every delivery from now on.
export const POST = withRoute({
  auth: "user",
  permission: "webhooks",
  summary:
    "Replace an endpoint's signing secret (admins); the new one is answered once and signs every delivery from now on",
  tags: ["Webhooks"],
  errors: ["NOT_FOUND"],
  response: webhookSecretAnswerSchema,
  params: z.object({ endpoint_id: z.string() }),
  handler: async ({ db, params, principal }) => rotateWebhookSecret(db, params.endpoint_id, principal.user.email),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
