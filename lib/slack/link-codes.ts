import "server-only";
import { randomInt } from "node:crypto";
import { z } from "zod";
import type { Db } from "../db/client";
import { ApiError } from "../errors";
import { linkSlackUser, slackUserIdSchema } from "./links";
import { hashOfCode, replaceCode, requireSlackApp } from "./codes";
import { callSlackApi } from "./web-api";

// A person links their own Slack identity (Account → Slack): they give their Slack user id, the bot posts a
// one-time code to that Slack user, and they type it back. Only whoever reads that Slack user's messages can
// finish, so nobody links a Slack identity that is not theirs. Only the code's SHA-256 is kept; it lasts ten
// minutes and allows one guess: a wrong code ends it.

export const slackLinkStartSchema = z.object({ slack_user_id: slackUserIdSchema }).meta({ id: "SlackLinkStart" });
export const slackLinkConfirmSchema = z
  .object({
    code: z
      .string()
      .trim()
      .regex(/^\d{8}$/, "the 8-digit code the Settle bot sent you in Slack"),
  })
  .meta({ id: "SlackLinkConfirm" });
export const slackLinkStartedSchema = z
  .object({ sent: z.literal(true), expires_at: z.string().meta({ format: "date-time" }) })
  .meta({ id: "SlackLinkStarted" });

type Person = { id: string; email: string };

export async function startSlackLink(
  db: Db,
  person: Person,
  slackUserId: string,
  now = new Date(),
): Promise<z.infer<typeof slackLinkStartedSchema>> {
  const app = await requireSlackApp(db);
  const code = String(randomInt(0, 100_000_000)).padStart(8, "0");
  const expiresAt = await replaceCode(db, "slack_link_codes", person.id, now, (tx, expires) =>
    tx.query(
      `INSERT INTO slack_link_codes (code_hash, user_id, slack_user_id, expires_at) VALUES ($1, $2, $3, $4::timestamptz)`,
      [hashOfCode(code), person.id, slackUserId, expires],
    ),
  );
  const sent = await callSlackApi(app, "chat.postMessage", {
    channel: slackUserId,
    text: `Your Settle link code is ${code}. Type it in Settle under Account → Slack within 10 minutes to act from Slack as ${person.email}. If you did not ask for this, ignore it.`,
  });
  if (!sent.ok) {
    await db.driver.query(`DELETE FROM slack_link_codes WHERE user_id = $1`, [person.id]);
    throw new ApiError(
      "INVALID_REQUEST",
      `Slack did not take the message to ${slackUserId} (${sent.error}): check the id (your Slack profile → ⋮ → Copy member ID).`,
      { path: "slack_user_id" },
    );
  }
  return { sent: true, expires_at: expiresAt.toISOString() };
}

export async function confirmSlackLink(
  db: Db,
  person: Person,
  code: string,
  now = new Date(),
): Promise<{ linked: string }> {
  // Every code of this person ends here, right or wrong (its own statement, so a wrong guess is not rolled back).
  const gone = await db.driver.query<{ code_hash: string; slack_user_id: string; expires_at: Date | string }>(
    `DELETE FROM slack_link_codes WHERE user_id = $1 RETURNING code_hash, slack_user_id, expires_at`,
    [person.id],
  );
  const match = gone.find((g) => g.code_hash === hashOfCode(code) && new Date(g.expires_at) > now);
  if (!match)
    throw new ApiError("INVALID_REQUEST", "That code is wrong or expired: ask for a new one.", { path: "code" });
  await db.driver.transaction((tx) =>
    linkSlackUser(tx, { userId: person.id, email: person.email, slackUserId: match.slack_user_id }, person.email),
  );
  return { linked: match.slack_user_id };
}
