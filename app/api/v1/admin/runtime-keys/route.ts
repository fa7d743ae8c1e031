import { z } from "zod";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import { createRuntimeKey, listRuntimeKeys, newRuntimeKeySchema } from "@/lib/identity/runtime-keys";

// Runtime ingest keys: listed by prefix, created with the secret answered once.
export const GET = withRoute({
  auth: "user",
  permission: "administer",
  query: z.object({ runtime: z.string().trim().min(1).max(200).optional() }),
  handler: async ({ db, query }) => ({ items: await listRuntimeKeys(db, query) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "administer",
  body: newRuntimeKeySchema,
  handler: async ({ db, principal, body }) => json(await createRuntimeKey(db, body.runtime, body.name, principal.user.email), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
