import { otherMethods, withRoute } from "@/lib/http/route";
import { changeOwnPassword, passwordChangeSchema } from "@/lib/identity/passwords";
import { z } from "zod";

// A person's own password, changed with the current one (signed-in sessions only, not a token); the one
// route open to someone whose temporary password must change.
export const POST = withRoute({
  auth: "session",
  permission: "read",
  whilePasswordMustChange: true,
  summary: "Change your own password (signed-in sessions only)",
  tags: ["Account"],
  errors: ["WRONG_PASSWORD"],
  response: z.object({ changed: z.literal(true) }),
  body: passwordChangeSchema,
  handler: async ({ db, body, principal }) => changeOwnPassword(db, principal.user, body),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
