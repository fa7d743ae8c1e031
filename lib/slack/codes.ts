import "server-only";
import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { ApiError } from "../errors";
import { loadSlackApp, type SlackApp } from "./settings";

// What the two one-time codes that link a person to Slack share: the `/settle link` code shown in Settle
// (commands.ts) and the code the bot sends to a Slack user (link-codes.ts). Only a code's SHA-256 is kept,
// one of each kind per person, for ten minutes.

const CODE_TTL_MS = 10 * 60_000;

export const hashOfCode = (code: string) => createHash("sha256").update(code).digest("hex");

/** The Slack app, or INVALID_REQUEST when no admin has set it up (a code would lead nowhere). */
export async function requireSlackApp(db: Db): Promise<SlackApp> {
  const app = await loadSlackApp(db);
  if (!app)
    throw new ApiError(
      "INVALID_REQUEST",
      "The Slack app is not set up in Settle yet: ask an admin (PUT /api/v1/admin/integrations/slack, docs/slack.md).",
    );
  return app;
}

/**
 * Replaces the person's code in `table` (and drops every expired one) with the row `insert` writes, in one
 * transaction; `insert` gets the new code's expiry as ISO text. Returns that expiry.
 */
export async function replaceCode(
  db: Db,
  table: "slack_command_codes" | "slack_link_codes",
  userId: string,
  now: Date,
  insert: (tx: Sql, expiresAt: string) => Promise<unknown>,
): Promise<Date> {
  const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
  await db.driver.transaction(async (tx) => {
    await tx.query(`DELETE FROM ${table} WHERE user_id = $1 OR expires_at < $2::timestamptz`, [
      userId,
      now.toISOString(),
    ]);
    await insert(tx, expiresAt.toISOString());
  });
  return expiresAt;
}
