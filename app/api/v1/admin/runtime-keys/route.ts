import { z } from "zod";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import {
  createRuntimeKey,
  listRuntimeKeys,
  newRuntimeKeySchema,
  runtimeKeyInfoSchema,
} from "@/lib/identity/runtime-keys";
import { itemsOf } from "@/lib/http/schemas";

// Runtime ingest keys: listed by prefix, created with the secret answered once.
export const GET = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Runtime ingest keys (admins)",
  tags: ["Runtime keys"],
  response: itemsOf(runtimeKeyInfoSchema),
  query: z.object({ runtime: z.string().trim().min(1).max(200).optional() }),
  handler: async ({ db, query }) => ({ items: await listRuntimeKeys(db, query) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Create a runtime key (admins); the key is answered once",
  tags: ["Runtime keys"],
  response: {
    201: z.object({
      key: z.string().describe("stl_rk_…: the secret, answered this once."),
      prefix: z.string(),
      runtime: z.string(),
    }),
  },
  body: newRuntimeKeySchema,
  handler: async ({ db, principal, body }) =>
    json(await createRuntimeKey(db, body.runtime, body.name, principal.user.email), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
