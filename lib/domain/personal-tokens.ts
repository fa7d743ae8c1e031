import { z } from "zod";
import { hashToken, newToken } from "../auth/tokens";
import type { Role } from "../auth/roles";
import { parseRole } from "../auth/roles";
import type { Db } from "../db/client";

// Operators' personal access tokens: the same actions as the console, for
// scripts. A token acts with its owner's current role; a deactivated owner's
// tokens stop working with them.

export const PERSONAL_TOKEN_PREFIX = "stl_pat_";

export type TokenUser = { id: string; email: string; name: string; role: Role };
const time = z.string().meta({ format: "date-time" });

export const personalTokenInfoSchema = z
  .object({
    prefix: z.string().describe("stl_pat_ and 8 characters: names the token; the secret is never stored or shown again."),
    name: z.string(),
    created_at: time,
    last_used_at: time.nullable().describe("Updated at most once a minute."),
    revoked_at: time.nullable(),
  })
  .meta({ id: "PersonalToken" });
export type PersonalTokenInfo = z.infer<typeof personalTokenInfoSchema>;

export async function createPersonalToken(db: Db, userId: string, name = "default"): Promise<{ token: string; prefix: string }> {
  const { token, prefix, hash } = newToken(PERSONAL_TOKEN_PREFIX);
  await db.prisma.personalToken.create({ data: { userId, name, prefix, hash } });
  return { token, prefix };
}

type TokenRow = { prefix: string; name: string; createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null };

function toInfo(t: TokenRow): PersonalTokenInfo {
  return {
    prefix: t.prefix,
    name: t.name,
    created_at: t.createdAt.toISOString(),
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
  };
}

/** A user's own tokens, newest first. */
export async function listPersonalTokens(db: Db, userId: string): Promise<PersonalTokenInfo[]> {
  const rows = await db.prisma.personalToken.findMany({ where: { userId }, orderBy: { createdAt: "desc" } });
  return rows.map(toInfo);
}

export const newPersonalTokenSchema = z.object({
  name: z
    .string()
    .trim()
    .min(1, "give it a name, e.g. the script or machine that will use it")
    .max(100)
    .regex(/^[^\p{Cc}]+$/u, "no control characters"),
});

/** A new token for `userId`: the secret is in this answer and nowhere else, ever. */
export async function issuePersonalToken(db: Db, userId: string, name: string): Promise<PersonalTokenInfo & { token: string }> {
  const { token, prefix } = await createPersonalToken(db, userId, name);
  return { ...toInfo(await db.prisma.personalToken.findUniqueOrThrow({ where: { prefix } })), token };
}

/**
 * Revokes one of the user's own tokens and says whether it had been revoked
 * already. Someone else's token, or no token, is null: the caller cannot tell
 * the two apart.
 */
export async function revokeOwnToken(db: Db, userId: string, prefix: string): Promise<{ token: PersonalTokenInfo; already_revoked: boolean } | null> {
  const revoked = await revokePersonalToken(db, userId, prefix);
  const row = await db.prisma.personalToken.findFirst({ where: { userId, prefix } });
  return row ? { token: toInfo(row), already_revoked: !revoked } : null;
}

export async function revokePersonalToken(db: Db, userId: string, prefix: string): Promise<boolean> {
  const { count } = await db.prisma.personalToken.updateMany({ where: { userId, prefix, revokedAt: null }, data: { revokedAt: new Date() } });
  return count > 0;
}

export type TokenLookup = { status: "valid"; user: TokenUser } | { status: "revoked" } | { status: "unknown" };

export async function lookupPersonalToken(db: Db, token: string): Promise<TokenLookup> {
  const row = await db.prisma.personalToken.findUnique({ where: { hash: hashToken(token) }, include: { user: true } });
  if (!row) return { status: "unknown" };
  const role = parseRole(row.user.role);
  if (row.revokedAt || row.user.banned || !role) return { status: "revoked" };
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await db.prisma.personalToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  }
  return { status: "valid", user: { id: row.user.id, email: row.user.email, name: row.user.name, role } };
}
