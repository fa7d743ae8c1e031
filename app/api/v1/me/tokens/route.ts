import { json, otherMethods, withRoute } from "@/lib/api/route";
import { issuePersonalToken, listPersonalTokens, newPersonalTokenSchema } from "@/lib/domain/personal-tokens";

// The caller's own personal access tokens; a new one's secret is answered once.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  handler: async ({ db, principal }) => ({ items: await listPersonalTokens(db, principal.user.id) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "read",
  body: newPersonalTokenSchema,
  handler: async ({ db, principal, body }) => json(await issuePersonalToken(db, principal.user.id, body.name), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
