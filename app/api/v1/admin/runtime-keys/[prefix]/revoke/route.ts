import { z } from "zod";
import { orNotFound } from "@/lib/errors";
import { otherMethods, withRoute } from "@/lib/http/route";
import { revokeRuntimeKeyOnce, RUNTIME_KEY_PREFIX, runtimeKeyInfoSchema } from "@/lib/identity/runtime-keys";

// Revoke a runtime key: refused with 401 KEY_REVOKED from its next request on.
export const POST = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Revoke a runtime key (admins)",
  tags: ["Runtime keys"],
  errors: ["NOT_FOUND"],
  response: z
    .object({ key: runtimeKeyInfoSchema, already_revoked: z.boolean() })
    .describe("The key, and whether it was already revoked."),
  params: z.object({
    prefix: z.string().regex(new RegExp(`^${RUNTIME_KEY_PREFIX}[a-z0-9]{8}$`), "a key prefix, like stl_rk_ab12cd34"),
  }),
  handler: async ({ db, principal, params }) => {
    const revoked = await revokeRuntimeKeyOnce(db, params.prefix, principal.user.email);
    return orNotFound(revoked, `No runtime key ${params.prefix}.`);
  },
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
