import { z } from "zod";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import { inviteUser, listUsers, newUserSchema, userInfoSchema } from "@/lib/identity/users";
import { itemsOf } from "@/lib/http/schemas";

// Admins list people and create them; without a password, one is generated and answered once.
export const GET = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Users (admins)",
  tags: ["Users"],
  response: itemsOf(userInfoSchema),
  handler: async ({ db }) => ({ items: await listUsers(db) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Create a user (admins); a generated password is answered once",
  tags: ["Users"],
  errors: ["USER_EXISTS"],
  response: {
    201: z.object({
      user: userInfoSchema,
      password: z
        .string()
        .nullable()
        .describe("The generated password, answered this once; null when the request set one."),
    }),
  },
  body: newUserSchema,
  handler: async ({ db, principal, body }) => json(await inviteUser(db, body, principal.user), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
