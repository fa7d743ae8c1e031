import { randomBytes } from "node:crypto";
import { z } from "zod";
import { getAuth } from "../auth/server";
import { roleSchema, type Role } from "../auth/roles";
import type { Db } from "../db/client";

// Settle's users: created by an admin (there is no sign-up), given one role,
// deactivated rather than deleted so the audit trail keeps its actors.

export const newUserSchema = z.object({
  email: z.string().trim().toLowerCase().email(),
  role: roleSchema,
  name: z.string().trim().min(1).max(200).optional(),
  password: z.string().min(10, "at least 10 characters").max(200).optional(),
});
export type NewUser = z.infer<typeof newUserSchema>;

export type UserInfo = { id: string; email: string; name: string; role: Role | null; active: boolean; created_at: string };

export class UserExistsError extends Error {
  constructor(email: string) {
    super(`A user with the email ${email} already exists.`);
  }
}

/** Creates a user; without a password, one is generated and returned (shown once). */
export async function createUser(db: Db, input: NewUser): Promise<{ user: UserInfo; password: string; generated: boolean }> {
  const data = newUserSchema.parse(input);
  if (await db.prisma.user.findUnique({ where: { email: data.email } })) throw new UserExistsError(data.email);
  const password = data.password ?? randomBytes(12).toString("base64url");
  const auth = await getAuth();
  await auth.api.createUser({ body: { email: data.email, password, name: data.name ?? data.email.split("@")[0]!, role: data.role } });
  const user = await db.prisma.user.findUniqueOrThrow({ where: { email: data.email } });
  return { user: toInfo(user), password, generated: !data.password };
}

function toInfo(u: { id: string; email: string; name: string; role: string | null; banned: boolean | null; createdAt: Date }): UserInfo {
  return { id: u.id, email: u.email, name: u.name, role: roleSchema.safeParse(u.role).data ?? null, active: !u.banned, created_at: u.createdAt.toISOString() };
}

export async function listUsers(db: Db): Promise<UserInfo[]> {
  return (await db.prisma.user.findMany({ orderBy: { createdAt: "asc" } })).map(toInfo);
}

export async function findUserByEmail(db: Db, email: string): Promise<UserInfo | null> {
  const u = await db.prisma.user.findUnique({ where: { email: email.trim().toLowerCase() } });
  return u ? toInfo(u) : null;
}

export async function setUserRole(db: Db, userId: string, role: Role): Promise<UserInfo> {
  return toInfo(await db.prisma.user.update({ where: { id: userId }, data: { role } }));
}

/** Deactivating ends the user's sessions at once; their tokens stop working with them. */
export async function setUserActive(db: Db, userId: string, active: boolean): Promise<UserInfo> {
  const [user] = await db.prisma.$transaction([
    db.prisma.user.update({ where: { id: userId }, data: { banned: !active, banReason: active ? null : "deactivated by an admin" } }),
    ...(active ? [] : [db.prisma.session.deleteMany({ where: { userId } })]),
  ]);
  return toInfo(user);
}

export async function countUsers(db: Db): Promise<number> {
  return db.prisma.user.count();
}
