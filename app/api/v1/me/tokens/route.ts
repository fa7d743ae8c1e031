import { json, otherMethods, withRoute } from "@/lib/http/route";
import { issuePersonalToken, listPersonalTokens, newPersonalTokenSchema } from "@/lib/identity/personal-tokens";

// The caller's own personal access tokens; a new one's secret is answered once.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  handler: async ({ db, principal }) => ({ items: await listPersonalTokens(db, principal.user.id) }),
});

// A token cannot mint tokens: a leaked one would otherwise outlive its own revocation.
export const POST = withRoute({
  auth: "session",
  permission: "read",
  body: newPersonalTokenSchema,
  handler: async ({ db, principal, body }) =>
    json(await issuePersonalToken(db, principal.user, body.name, body.expires_in_days), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
