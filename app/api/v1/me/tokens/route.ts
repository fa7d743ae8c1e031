import { z } from "zod";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import {
  issuePersonalToken,
  listPersonalTokens,
  newPersonalTokenSchema,
  personalTokenInfoSchema,
} from "@/lib/identity/personal-tokens";
import { itemsOf } from "@/lib/http/schemas";

// The caller's own personal access tokens; a new one's secret is answered once.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  summary: "Your personal access tokens",
  tags: ["Personal tokens"],
  response: itemsOf(personalTokenInfoSchema),
  handler: async ({ db, principal }) => ({ items: await listPersonalTokens(db, principal.user.id) }),
});

// A token cannot mint tokens: a leaked one would otherwise outlive its own revocation.
export const POST = withRoute({
  auth: "session",
  permission: "read",
  summary: "Create a personal access token (signed-in sessions only); its secret is answered once",
  tags: ["Personal tokens"],
  response: {
    201: z.intersection(
      personalTokenInfoSchema,
      z.object({ token: z.string().describe("stl_pat_…: the secret, answered this once.") }),
    ),
  },
  body: newPersonalTokenSchema,
  handler: async ({ db, principal, body }) =>
    json(await issuePersonalToken(db, principal.user, body.name, body.expires_in_days), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
