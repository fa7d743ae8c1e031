import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import {
  deleteRuntimeRetention,
  putRuntimeRetention,
  retentionInputSchema,
  retentionSchema,
} from "@/lib/retention/settings";

const params = z.object({ runtime: z.string().min(1).max(200) });

// Admins give one runtime its own period (both numbers, like a policy row).
export const PUT = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Give a runtime its own retention period (admins)",
  tags: ["Retention"],
  errors: ["NOT_FOUND"],
  response: { 200: { description: "Retention now in effect.", schema: retentionSchema } },
  params,
  body: retentionInputSchema,
  handler: ({ db, principal, params, body }) => putRuntimeRetention(db, params.runtime, body, actorOf(principal)),
});

// Admins put a runtime back on the default period.
export const DELETE = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Put a runtime back on the default retention period (admins)",
  tags: ["Retention"],
  errors: ["NOT_FOUND"],
  response: { 200: { description: "Retention now in effect.", schema: retentionSchema } },
  params,
  handler: ({ db, principal, params }) => deleteRuntimeRetention(db, params.runtime, actorOf(principal)),
});

export const { GET, POST, PATCH } = otherMethods("PUT", "DELETE");
