import { z } from "zod";
import { orNotFound } from "@/lib/errors";
import { otherMethods, withRoute } from "@/lib/http/route";
import { PERSONAL_TOKEN_PREFIX, revokeOwnToken, personalTokenInfoSchema } from "@/lib/identity/personal-tokens";

// Revoke one of your own tokens; someone else's is not found.
export const POST = withRoute({
  auth: "user",
  permission: "read",
  summary: "Revoke one of your tokens",
  tags: ["Personal tokens"],
  errors: ["NOT_FOUND"],
  response: z
    .object({ token: personalTokenInfoSchema, already_revoked: z.boolean() })
    .describe("The token, and whether it was already revoked."),
  params: z.object({
    prefix: z
      .string()
      .regex(new RegExp(`^${PERSONAL_TOKEN_PREFIX}[a-z0-9]{8}$`), "a token prefix, like stl_pat_ab12cd34"),
  }),
  handler: async ({ db, principal, params }) => {
    const revoked = await revokeOwnToken(db, principal.user, params.prefix);
    return orNotFound(revoked, `You have no token ${params.prefix}.`);
  },
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
