import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { updateUser, userPatchSchema } from "@/lib/identity/users";

// Change a person's role, or deactivate / reactivate them. Nobody demotes or
// deactivates themselves, and the last active admin stays.
export const PATCH = withRoute({
  auth: "user",
  permission: "administer",
  params: z.object({ user_id: z.string().min(1).max(128) }),
  body: userPatchSchema,
  handler: ({ db, principal, params, body }) => updateUser(db, params.user_id, body, principal.user),
});

export const { GET, POST, PUT, DELETE } = otherMethods("PATCH");
