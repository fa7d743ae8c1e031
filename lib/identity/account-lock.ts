import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { env } from "../env";
import { ApiError } from "../errors";

// Failed sign-ins counted per account, whatever address they come from: a
// limit per IP alone lets someone with many addresses guess one password. The
// key is a hash of the normalised email, so an address nobody has is counted
// and locked exactly like a real one (nothing tells them apart) and the table
// names nobody. A wrong current password on a password change counts the same:
// a stolen session must not be an unlimited guess at the password.

export const ACCOUNT_WINDOW_MS = 15 * 60_000;

function keyOf(email: string): string {
  return createHash("sha256").update(`sign-in:${email.trim().toLowerCase()}`).digest("hex");
}

/** When the account's lock ends, or null when it may try. */
export async function accountLockedUntil(db: Db, email: string, now = new Date()): Promise<Date | null> {
  const row = await db.prisma.signInFailure.findUnique({ where: { key: keyOf(email) } });
  return row?.lockedUntil && row.lockedUntil > now ? row.lockedUntil : null;
}

/** Refuses (429 RATE_LIMITED) while the account is locked; says for how long and what else to do. */
export async function assertAccountOpen(db: Db, email: string, now = new Date()): Promise<void> {
  const until = await accountLockedUntil(db, email, now);
  if (!until) return;
  const seconds = Math.ceil((until.getTime() - now.getTime()) / 1000);
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  throw new ApiError(
    "RATE_LIMITED",
    `Too many failed sign-ins for this account. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}, or ask an admin to set a new password.`,
    { retry_after_s: seconds },
  );
}

/**
 * Counts one failed sign-in; the limit-th failure inside the window locks the
 * account for a window. One statement, so instances racing on the same
 * account count every failure.
 */
export async function recordFailedSignIn(db: Db, email: string, now = new Date()): Promise<void> {
  const limit = env().SETTLE_SIGN_IN_ACCOUNT_LIMIT;
  const windowStart = new Date(now.getTime() - ACCOUNT_WINDOW_MS);
  const lockUntil = new Date(now.getTime() + ACCOUNT_WINDOW_MS);
  await db.driver.query(
    `INSERT INTO sign_in_failures (key, failures, window_start, locked_until)
     VALUES ($1, 1, $2::timestamptz, $3::timestamptz)
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN sign_in_failures.window_start < $4::timestamptz THEN 1 ELSE sign_in_failures.failures + 1 END,
       window_start = CASE WHEN sign_in_failures.window_start < $4::timestamptz THEN $2::timestamptz ELSE sign_in_failures.window_start END,
       locked_until = CASE
         WHEN (CASE WHEN sign_in_failures.window_start < $4::timestamptz THEN 1 ELSE sign_in_failures.failures + 1 END) >= $5::int
         THEN $6::timestamptz ELSE sign_in_failures.locked_until END`,
    [
      keyOf(email),
      now.toISOString(),
      limit <= 1 ? lockUntil.toISOString() : null,
      windowStart.toISOString(),
      limit,
      lockUntil.toISOString(),
    ],
  );
}

/** A successful sign-in clears the count. */
export async function clearFailedSignIns(db: Db, email: string): Promise<void> {
  await db.prisma.signInFailure.deleteMany({ where: { key: keyOf(email) } });
}
