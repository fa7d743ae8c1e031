import "server-only";
import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { publicUrl } from "../env";
import { recordAdminAction } from "../audit/admin";
import { getAuth } from "./auth";
import { assertAccountOpen, clearFailedSignIns, recordFailedSignIn } from "./account-lock";
import type { Actor } from "./users";

// Passwords after the first: a person changes their own (knowing the current one); an admin resets
// someone's, either as a one-time link (shown once, good for a day) or as a temporary password that must be
// changed at the next sign-in. Any change closes every other door: a reset or a redeemed link ends all the
// person's sessions, their own change every session but the one they made it from, and each of them spends
// every reset link of the person not used yet (a stale link would reset the password behind their back).
// A wrong current password counts toward the account's lock like a failed sign-in. Everything is in the
// audit trail; the temporary password and the link's token are never stored (only Better Auth's hash of
// the password, the link's SHA-256).

export const RESET_LINK_HOURS = 24;
const password = z.string().min(10, "at least 10 characters").max(128, "at most 128 characters");

export const passwordChangeSchema = z
  .object({ current_password: z.string().min(1).max(128), new_password: password })
  .refine((p) => p.current_password !== p.new_password, {
    message: "the new password must differ from the current one",
    path: ["new_password"],
  })
  .meta({ id: "PasswordChange" });

export const passwordResetRequestSchema = z
  .object({
    mode: z
      .enum(["link", "temporary"])
      .describe(
        "link: a one-time link to choose a new password; temporary: a password that must be changed at sign-in.",
      ),
  })
  .meta({ id: "PasswordResetRequest" });

export const passwordResetAnswerSchema = z
  .object({
    mode: z.enum(["link", "temporary"]),
    link: z.string().nullable().describe("Shown this once: the person opens it to choose a password."),
    temporary_password: z.string().nullable().describe("Shown this once: the person must change it when signing in."),
    expires_at: z.string().meta({ format: "date-time" }).nullable(),
  })
  .meta({ id: "PasswordResetAnswer" });
export type PasswordResetAnswer = z.infer<typeof passwordResetAnswerSchema>;

export const resetLinkRedeemSchema = z.object({ token: z.string().min(1).max(200), new_password: password });

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

async function credentialHash(db: Db, userId: string): Promise<string | null> {
  const account = await db.prisma.account.findFirst({ where: { userId, providerId: "credential" } });
  return account?.password ?? null;
}

async function setPassword(db: Db, userId: string, plain: string, mustChange: boolean): Promise<void> {
  const ctx = await (await getAuth()).$context;
  const hash = await ctx.password.hash(plain);
  const updated = await db.prisma.account.updateMany({
    where: { userId, providerId: "credential" },
    data: { password: hash },
  });
  if (updated.count === 0) {
    throw new ApiError("INVALID_REQUEST", "This person signs in without a Settle password; there is none to set.");
  }
  await db.prisma.user.update({ where: { id: userId }, data: { passwordMustChange: mustChange } });
}

/** Ends the person's sessions (all but `keep`, the one a change was made from): whoever held one signs in again. */
async function endSessions(db: Db, userId: string, keep?: string): Promise<void> {
  await db.prisma.session.deleteMany({ where: keep ? { userId, id: { not: keep } } : { userId } });
}

/** Spends every reset link of the person not used yet: after any change of password, none may set it again. */
async function spendResetLinks(db: Db, userId: string, now: Date): Promise<void> {
  await db.prisma.passwordReset.updateMany({ where: { userId, usedAt: null }, data: { usedAt: now } });
}

/**
 * A person's new password, by their own hand (the current one or a reset link proved it): set, every session
 * but `sessionId` ended, unspent reset links spent, `password_changed` in the audit trail (with `after`).
 */
async function passwordChanged(
  db: Db,
  user: { id: string; email: string; sessionId?: string },
  password: string,
  now: Date,
  after?: Record<string, unknown>,
): Promise<void> {
  await setPassword(db, user.id, password, false);
  await endSessions(db, user.id, user.sessionId);
  await spendResetLinks(db, user.id, now);
  await recordAdminAction(db.driver, {
    actor: user.email,
    action: "password_changed",
    targetType: "user",
    targetId: user.email,
    ...(after ? { after } : {}),
  });
}

/** The signed-in person's own change: the current password proves it is them. */
export async function changeOwnPassword(
  db: Db,
  user: { id: string; email: string; sessionId?: string },
  input: z.infer<typeof passwordChangeSchema>,
  now = new Date(),
): Promise<{ changed: true }> {
  await assertAccountOpen(db, user.email, now);
  const hash = await credentialHash(db, user.id);
  const ctx = await (await getAuth()).$context;
  if (!hash || !(await ctx.password.verify({ hash, password: input.current_password }))) {
    await recordFailedSignIn(db, user.email, now);
    throw new ApiError("WRONG_PASSWORD", "The current password is not right.", { field: "current_password" });
  }
  await clearFailedSignIns(db, user.email);
  // A stolen cookie must not outlive the change it prompted; the person stays signed in where they made it.
  await passwordChanged(db, user, input.new_password, now);
  return { changed: true };
}

async function targetOf(db: Db, userId: string) {
  const target = await db.prisma.user.findUnique({ where: { id: userId } });
  if (!target) throw new ApiError("NOT_FOUND", `No user ${userId}.`);
  return target;
}

/** An admin's (or the CLI's) reset of someone's password; a link is on `baseUrl` (the CLI's: the running server's). */
export async function resetPassword(
  db: Db,
  userId: string,
  mode: "link" | "temporary",
  actor: Actor,
  now = new Date(),
  baseUrl = publicUrl(),
): Promise<PasswordResetAnswer> {
  const target = await targetOf(db, userId);
  let answer: PasswordResetAnswer;
  // The newest reset is the only one that works: a link made earlier (and perhaps leaked) is spent.
  await spendResetLinks(db, target.id, now);
  if (mode === "temporary") {
    const temporary = randomBytes(12).toString("base64url");
    await setPassword(db, target.id, temporary, true);
    answer = { mode, link: null, temporary_password: temporary, expires_at: null };
  } else {
    if (!(await credentialHash(db, target.id)))
      throw new ApiError("INVALID_REQUEST", "This person signs in without a Settle password; there is none to reset.");
    const token = randomBytes(32).toString("base64url");
    const expiresAt = new Date(now.getTime() + RESET_LINK_HOURS * 3_600_000);
    await db.prisma.passwordReset.create({
      data: { userId: target.id, tokenHash: digest(token), expiresAt, createdBy: actor.email },
    });
    answer = {
      mode,
      link: `${baseUrl}/reset-password?token=${token}`,
      temporary_password: null,
      expires_at: expiresAt.toISOString(),
    };
  }
  await endSessions(db, target.id);
  await recordAdminAction(db.driver, {
    actor: actor.email,
    action: "password_reset",
    targetType: "user",
    targetId: target.email,
    after: { mode, expires_at: answer.expires_at },
  });
  return answer;
}

/** The one use of a reset link: the new password is set, the link spent, every session ended. */
export async function redeemResetLink(
  db: Db,
  input: z.infer<typeof resetLinkRedeemSchema>,
  now = new Date(),
): Promise<{ email: string }> {
  // Spent in one statement, so two tabs submitting the same link cannot both use it.
  const spent = await db.driver.query<{ user_id: string }>(
    `UPDATE password_resets SET used_at = $2::timestamptz
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2::timestamptz
      RETURNING user_id`,
    [digest(input.token), now.toISOString()],
  );
  if (!spent[0])
    throw new ApiError("RESET_LINK_INVALID", "This reset link was used already, has expired, or never existed.");
  const target = await targetOf(db, spent[0].user_id);
  await passwordChanged(db, target, input.new_password, now, { via: "reset link" });
  return { email: target.email };
}
