import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { ApiError } from "../errors";
import { getAuth } from "./auth";
import { roles, type Role } from "./roles";
import type { Db } from "../db/client";
import { recordAdminAction } from "../audit/admin";

/** Who made an admin change: the admin's id (for the rules about oneself) and email (for the audit trail). */
export type Actor = { id: string | null; email: string };
const CLI_ACTOR: Actor = { id: null, email: "cli" };

// Settle's users: created by an admin (there is no sign-up), given one role,
// deactivated rather than deleted so the audit trail keeps its actors.

export const roleSchema = z.enum(roles);

export const newUserSchema = z.object({
  email: z.string().trim().toLowerCase().email(),
  role: roleSchema,
  name: z.string().trim().min(1).max(200).optional(),
  password: z.string().min(10, "at least 10 characters").max(200).optional(),
});
export type NewUser = z.infer<typeof newUserSchema>;

export const userInfoSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: roleSchema.nullable(),
    active: z.boolean().describe("false once deactivated: no sign-in, no sessions, tokens revoked."),
    created_at: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "User" });
export type UserInfo = z.infer<typeof userInfoSchema>;

export class UserExistsError extends Error {
  constructor(email: string) {
    super(`A user with the email ${email} already exists.`);
  }
}

/** Creates a user; without a password, one is generated and returned (shown once). */
export async function createUser(
  db: Db,
  input: NewUser,
  actor: Actor = CLI_ACTOR,
): Promise<{ user: UserInfo; password: string; generated: boolean }> {
  const data = newUserSchema.parse(input);
  if (await db.prisma.user.findUnique({ where: { email: data.email } })) throw new UserExistsError(data.email);
  const password = data.password ?? randomBytes(12).toString("base64url");
  const auth = await getAuth();
  try {
    await auth.api.createUser({
      body: { email: data.email, password, name: data.name ?? data.email.split("@")[0]!, role: data.role },
    });
  } catch (error) {
    // Two admins adding the same person at once: the second one lost the race.
    if (await db.prisma.user.findUnique({ where: { email: data.email } })) throw new UserExistsError(data.email);
    throw error;
  }
  const user = toInfo(await db.prisma.user.findUniqueOrThrow({ where: { email: data.email } }));
  await recordAdminAction(db.driver, {
    actor: actor.email,
    action: "user_invited",
    targetType: "user",
    targetId: user.email,
    after: snapshot(user),
  });
  return { user, password, generated: !data.password };
}

/** createUser for the admin API: an email already in use is a 409 naming the field. */
export async function inviteUser(
  db: Db,
  input: NewUser,
  actor: Actor,
): Promise<{ user: UserInfo; password: string | null }> {
  try {
    const { user, password, generated } = await createUser(db, input, actor);
    return { user, password: generated ? password : null };
  } catch (error) {
    if (error instanceof UserExistsError) throw new ApiError("USER_EXISTS", error.message, { field: "email" });
    throw error;
  }
}

type UserRow = {
  id: string;
  email: string;
  name: string;
  role: string | null;
  banned: boolean | null;
  createdAt: Date | string;
};
const USER_COLUMNS = `id, email, name, role, banned, "createdAt"`;

function toInfo(u: UserRow): UserInfo {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: roleSchema.safeParse(u.role).data ?? null,
    active: !u.banned,
    created_at: new Date(u.createdAt).toISOString(),
  };
}

function snapshot(u: UserInfo): Record<string, unknown> {
  return { email: u.email, name: u.name, role: u.role, active: u.active };
}

export async function listUsers(db: Db): Promise<UserInfo[]> {
  return (await db.prisma.user.findMany({ orderBy: { createdAt: "asc" } })).map(toInfo);
}

export async function getUserByEmail(db: Db, email: string): Promise<UserInfo | null> {
  const u = await db.prisma.user.findUnique({ where: { email: email.trim().toLowerCase() } });
  return u ? toInfo(u) : null;
}

export const userPatchSchema = z
  .object({ role: roleSchema.optional(), active: z.boolean().optional() })
  .refine((p) => p.role !== undefined || p.active !== undefined, { message: "give a role, active, or both" });
export type UserPatch = z.infer<typeof userPatchSchema>;

/**
 * Changes a user's role and/or deactivates or reactivates them. `actorId` is
 * the admin doing it: an admin may not demote or deactivate themselves, and
 * the last active admin can never be removed, so Settle always keeps someone
 * who can manage it. Deactivating ends the user's sessions and revokes their
 * personal access tokens (reactivating does not bring those back). Refusals
 * are ApiErrors: NOT_FOUND, FORBIDDEN (yourself), TRANSITION_REFUSED (last admin).
 */
export async function updateUser(
  db: Db,
  userId: string,
  patch: UserPatch,
  actor: Actor = CLI_ACTOR,
): Promise<UserInfo> {
  const actorId = actor.id;
  const change = userPatchSchema.parse(patch);
  const updated = await db.driver.transaction(async (tx) => {
    // Every active admin row is locked, in one order: two admins demoting each
    // other at the same moment are serialised, and the second sees one admin left.
    const admins = await tx.query<{ id: string }>(
      `SELECT id FROM "user" WHERE role = 'admin' AND banned IS NOT TRUE ORDER BY id FOR UPDATE`,
    );
    const [target] = await tx.query<UserRow>(`SELECT ${USER_COLUMNS} FROM "user" WHERE id = $1`, [userId]);
    if (!target) throw new ApiError("NOT_FOUND", `No user ${userId}.`);
    const isActiveAdmin = target.role === "admin" && !target.banned;
    const losesAdmin =
      isActiveAdmin && ((change.role !== undefined && change.role !== "admin") || change.active === false);
    if (losesAdmin && actorId === userId) {
      throw new ApiError("FORBIDDEN", "You cannot demote or deactivate yourself; another admin has to do it.", {
        rule: "self",
      });
    }
    if (losesAdmin && admins.length <= 1) {
      throw new ApiError("LAST_ADMIN", `${target.email} is the last active admin. Make someone else an admin first.`);
    }
    const deactivating = change.active === false && !target.banned;
    // null leaves a field as it is; `active` sets banned and its reason together.
    const [user] = await tx.query<UserRow>(
      `UPDATE "user" SET role = COALESCE($2, role),
         banned = COALESCE($3, banned),
         "banReason" = CASE WHEN $3::boolean IS NULL THEN "banReason" WHEN $3 THEN 'deactivated by an admin' ELSE NULL END,
         "banExpires" = CASE WHEN $3::boolean IS NULL THEN "banExpires" ELSE NULL END,
         "updatedAt" = now()
       WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [userId, change.role ?? null, change.active === undefined ? null : !change.active],
    );
    if (deactivating) {
      await tx.query(`DELETE FROM "session" WHERE "userId" = $1`, [userId]);
      await tx.query(`UPDATE personal_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`, [
        userId,
      ]);
    }
    const before = toInfo(target);
    const after = toInfo(user!);
    if (before.role !== after.role) {
      await recordAdminAction(tx, {
        actor: actor.email,
        action: "user_role_changed",
        targetType: "user",
        targetId: after.email,
        before: snapshot(before),
        after: snapshot(after),
      });
    }
    if (before.active !== after.active) {
      const action = after.active ? "user_reactivated" : "user_deactivated";
      await recordAdminAction(tx, {
        actor: actor.email,
        action,
        targetType: "user",
        targetId: after.email,
        before: snapshot(before),
        after: snapshot(after),
      });
    }
    return after;
  });
  return updated;
}

export async function setUserRole(db: Db, userId: string, role: Role, actor: Actor = CLI_ACTOR): Promise<UserInfo> {
  return updateUser(db, userId, { role }, actor);
}

export async function setUserActive(
  db: Db,
  userId: string,
  active: boolean,
  actor: Actor = CLI_ACTOR,
): Promise<UserInfo> {
  return updateUser(db, userId, { active }, actor);
}

export async function countUsers(db: Db): Promise<number> {
  return db.prisma.user.count();
}
