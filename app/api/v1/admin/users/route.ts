import { json, otherMethods, withRoute } from "@/lib/http/route";
import { inviteUser, listUsers, newUserSchema } from "@/lib/identity/users";

// Admins list people and create them; without a password, one is generated and answered once.
export const GET = withRoute({
  auth: "user",
  permission: "administer",
  handler: async ({ db }) => ({ items: await listUsers(db) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "administer",
  body: newUserSchema,
  handler: async ({ db, principal, body }) => json(await inviteUser(db, body, principal.user), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
