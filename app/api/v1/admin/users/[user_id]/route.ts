import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { updateUser, userPatchSchema, userInfoSchema } from "@/lib/identity/users";

// Change a person's role, or deactivate / reactivate them. Nobody demotes or
// deactivates themselves, and the last active admin stays.
export const PATCH = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Change a user's role or deactivate them (admins)",
  tags: ["Users"],
  errors: ["NOT_FOUND", "LAST_ADMIN"],
  response: userInfoSchema,
  params: z.object({ user_id: z.string().min(1).max(128) }),
  body: userPatchSchema,
  handler: ({ db, principal, params, body }) => updateUser(db, params.user_id, body, principal.user),
});

export const { GET, POST, PUT, DELETE } = otherMethods("PATCH");
