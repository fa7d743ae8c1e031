import "server-only";
import { z } from "zod";
import { hashToken, newToken } from "./tokens";
import type { Role } from "./roles";
import { parseRole } from "./roles";
import type { Db } from "../db/client";
import { env } from "../env";
import { recordAdminAction } from "../audit/admin";

// Operators' personal access tokens: the same actions as the console, for
// scripts. A token acts with its owner's current role; a deactivated owner's
// tokens are revoked with them. Every token expires (90 days unless its
// creator picks 1–366), and only a signed-in session can create one, so a
// leaked token can never outlive itself by minting another.

export const PERSONAL_TOKEN_PREFIX = "stl_pat_";

export type TokenUser = { id: string; email: string; name: string; role: Role };
const time = z.string().meta({ format: "date-time" });

export const personalTokenInfoSchema = z
  .object({
    prefix: z
      .string()
      .describe("stl_pat_ and 8 characters: names the token; the secret is never stored or shown again."),
    name: z.string(),
    created_at: time,
    last_used_at: time.nullable().describe("Updated at most once a minute."),
    revoked_at: time.nullable(),
    expires_at: time.describe("From then on the token answers 401 TOKEN_EXPIRED."),
    expired: z.boolean().describe("expires_at has passed (as of this answer)."),
  })
  .meta({ id: "PersonalToken" });
export type PersonalTokenInfo = z.infer<typeof personalTokenInfoSchema>;

const DAY_MS = 86_400_000;

export async function createPersonalToken(
  db: Db,
  userId: string,
  name = "default",
  expiresInDays = env().SETTLE_TOKEN_DEFAULT_DAYS,
): Promise<{ token: string; prefix: string; expiresAt: Date }> {
  const { token, prefix, hash } = newToken(PERSONAL_TOKEN_PREFIX);
  const expiresAt = new Date(Date.now() + expiresInDays * DAY_MS);
  await db.prisma.personalToken.create({ data: { userId, name, prefix, hash, expiresAt } });
  return { token, prefix, expiresAt };
}

type TokenRow = {
  prefix: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date;
};

function toInfo(t: TokenRow): PersonalTokenInfo {
  return {
    prefix: t.prefix,
    name: t.name,
    created_at: t.createdAt.toISOString(),
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
    expires_at: t.expiresAt.toISOString(),
    expired: t.expiresAt.getTime() <= Date.now(),
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
  expires_in_days: z
    .number()
    .int()
    .min(1)
    .max(366)
    .optional()
    .describe("How long the token lives; 90 days unless set (SETTLE_TOKEN_DEFAULT_DAYS)."),
});

/** A new token for `userId`: the secret is in this answer and nowhere else, ever. */
type Owner = { id: string; email: string };

export async function issuePersonalToken(
  db: Db,
  owner: Owner,
  name: string,
  expiresInDays?: number,
): Promise<PersonalTokenInfo & { token: string }> {
  const { token, prefix } = await createPersonalToken(db, owner.id, name, expiresInDays);
  const info = toInfo(await db.prisma.personalToken.findUniqueOrThrow({ where: { prefix } }));
  await recordAdminAction(db.driver, {
    actor: owner.email,
    action: "personal_token_created",
    targetType: "personal_token",
    targetId: prefix,
    after: { owner: owner.email, name: info.name, expires_at: info.expires_at },
  });
  return { ...info, token };
}

/**
 * Revokes one of the user's own tokens and says whether it had been revoked
 * already. Someone else's token, or no token, is null: the caller cannot tell
 * the two apart.
 */
export async function revokeOwnToken(
  db: Db,
  owner: Owner,
  prefix: string,
): Promise<{ token: PersonalTokenInfo; already_revoked: boolean } | null> {
  const revoked = await revokePersonalToken(db, owner.id, prefix);
  const row = await db.prisma.personalToken.findFirst({ where: { userId: owner.id, prefix } });
  if (row && revoked) {
    await recordAdminAction(db.driver, {
      actor: owner.email,
      action: "personal_token_revoked",
      targetType: "personal_token",
      targetId: prefix,
      before: { owner: owner.email, name: row.name, revoked_at: null },
      after: { owner: owner.email, name: row.name, revoked_at: row.revokedAt?.toISOString() ?? null },
    });
  }
  return row ? { token: toInfo(row), already_revoked: !revoked } : null;
}

export async function revokePersonalToken(db: Db, userId: string, prefix: string): Promise<boolean> {
  const { count } = await db.prisma.personalToken.updateMany({
    where: { userId, prefix, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  return count > 0;
}

export type TokenLookup =
  | { status: "valid"; user: TokenUser }
  | { status: "revoked" }
  | { status: "expired"; expiresAt: string }
  | { status: "unknown" };

export async function lookupPersonalToken(db: Db, token: string): Promise<TokenLookup> {
  const row = await db.prisma.personalToken.findUnique({ where: { hash: hashToken(token) }, include: { user: true } });
  if (!row) return { status: "unknown" };
  const role = parseRole(row.user.role);
  if (row.revokedAt || row.user.banned || !role) return { status: "revoked" };
  if (row.expiresAt.getTime() <= Date.now()) return { status: "expired", expiresAt: row.expiresAt.toISOString() };
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await db.prisma.personalToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  }
  return { status: "valid", user: { id: row.user.id, email: row.user.email, name: row.user.name, role } };
}
