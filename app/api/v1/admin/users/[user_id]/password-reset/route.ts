import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { passwordResetAnswerSchema, passwordResetRequestSchema, resetPassword } from "@/lib/identity/passwords";

// An admin resets someone's password: a one-time link, or a temporary password to change at sign-in. Either
// is answered once, ends the person's sessions and is in the audit trail.
export const POST = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Reset someone's password: a one-time link or a temporary password, answered once (admins)",
  tags: ["Users"],
  errors: ["NOT_FOUND"],
  response: passwordResetAnswerSchema,
  params: z.object({ user_id: z.string() }),
  body: passwordResetRequestSchema,
  handler: async ({ db, params, body, principal }) =>
    resetPassword(db, params.user_id, body.mode, { id: principal.user.id, email: principal.user.email }),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
