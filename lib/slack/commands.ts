import "server-only";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Db } from "../db/client";
import { json } from "../http/route";
import { can, parseRole } from "../identity/roles";
import { linkSlackUser, slackUserIdSchema } from "./links";
import { hashOfCode, replaceCode, requireSlackApp } from "./codes";
import { readSignedSlackRequest } from "./signed-request";

// Linking from Slack itself: Account → Slack shows a person a one-time code, they type `/settle link CODE` in
// Slack, and Slack's signed slash-command request (POST /api/v1/integrations/slack/commands) names the Slack user
// who typed it. That Slack user is then linked to the person the code was made for. The code alone names the
// person, so it is long (16 Crockford base-32 characters, 80 bits) and unguessable; only its SHA-256 is kept,
// one per person, for ten minutes, used once. Whoever reads the code can link their own Slack user to you, so
// the page says to type it, not to share it; the link then shows on the page.

const MAX_BODY = 16 * 1024;
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CODE_RE = /^[0-9A-HJKMNP-TV-Z]{16}$/;
export const SLASH_COMMAND = "/settle";

export const slackCommandCodeSchema = z
  .object({
    code: z.string().describe("The one-time code, in groups of four (dashes optional when typed)."),
    command: z.string().describe("What to type in Slack: `/settle link CODE`."),
    expires_at: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "SlackCommandCode" });
type CommandCode = z.infer<typeof slackCommandCodeSchema>;

/** 16 characters of Crockford's base 32 from 80 random bits. */
function newCode(): string {
  const bytes = randomBytes(10);
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = "";
  for (let i = 15; i >= 0; i--) out += ALPHABET[Number((bits >> BigInt(i * 5)) & 31n)];
  return out;
}

/** A code as typed: case, spaces and dashes ignored, and Crockford's look-alikes read as the digit. */
export function normalizeCommandCode(typed: string): string {
  return typed
    .toUpperCase()
    .replace(/[\s-]+/g, "")
    .replace(/O/g, "0")
    .replace(/[IL]/g, "1");
}

const grouped = (code: string) => code.match(/.{4}/g)!.join("-");

/** A new code for `person`, replacing any earlier one. Only its hash is stored. */
export async function issueSlackCommandCode(db: Db, person: { id: string }, now = new Date()): Promise<CommandCode> {
  await requireSlackApp(db);
  const code = newCode();
  const expiresAt = await replaceCode(db, "slack_command_codes", person.id, now, (tx, expires) =>
    tx.query(`INSERT INTO slack_command_codes (code_hash, user_id, expires_at) VALUES ($1, $2, $3::timestamptz)`, [
      hashOfCode(code),
      person.id,
      expires,
    ]),
  );
  const shown = grouped(code);
  return { code: shown, command: `${SLASH_COMMAND} link ${shown}`, expires_at: expiresAt.toISOString() };
}

/** Slack shows this only to the person who typed the command. */
const ephemeral = (text: string) => json({ response_type: "ephemeral", text });

const HELP = `Link your Slack user to Settle: open Settle → Account → Slack, take the one-time code shown there, and type \`${SLASH_COMMAND} link CODE\` here within 10 minutes.`;

type Person = { id: string; email: string; role: string | null; banned: boolean | null };

/** Takes the code once: a code that matches nothing, or has expired, links nobody. */
async function takeCode(db: Db, code: string, now: Date): Promise<Person | null> {
  const [gone] = await db.driver.query<{ user_id: string; expires_at: Date | string }>(
    `DELETE FROM slack_command_codes WHERE code_hash = $1 RETURNING user_id, expires_at`,
    [hashOfCode(code)],
  );
  if (!gone || new Date(gone.expires_at) <= now) return null;
  const [person] = await db.driver.query<Person>(`SELECT id, email, role, banned FROM "user" WHERE id = $1`, [
    gone.user_id,
  ]);
  return person ?? null;
}

/** POST /api/v1/integrations/slack/commands: Slack's signed slash-command request, answered in Slack's own form. */
export async function answerSlackCommand(db: Db, req: Request, now = new Date()): Promise<Response> {
  const { raw } = await readSignedSlackRequest(
    db,
    req,
    { maxBytes: MAX_BODY, advice: "Slack's slash-command requests are smaller." },
    now,
  );
  const form = new URLSearchParams(raw.toString("utf8"));
  const [verb = "", ...rest] = (form.get("text") ?? "").trim().split(/\s+/);
  if (verb.toLowerCase() !== "link") return ephemeral(HELP);
  const code = normalizeCommandCode(rest.join(""));
  if (!CODE_RE.test(code)) return ephemeral(`That is not a Settle link code. ${HELP}`);
  const slackUser = slackUserIdSchema.safeParse(form.get("user_id") ?? "");
  if (!slackUser.success) return ephemeral("Slack did not say who you are (user_id): nothing was linked.");

  const person = await takeCode(db, code, now);
  if (!person)
    return ephemeral(
      "That code is wrong, used or expired: nothing was linked. Get a new one in Settle under Account → Slack.",
    );
  if (person.banned) return ephemeral("That Settle account is deactivated: nothing was linked.");
  await db.driver.transaction((tx) =>
    linkSlackUser(tx, { userId: person.id, email: person.email, slackUserId: slackUser.data }, person.email),
  );
  const role = parseRole(person.role);
  return ephemeral(
    can(role, "act")
      ? `Linked: your clicks on Settle's messages now act as ${person.email} (${role}).`
      : `Linked to ${person.email}, but that role (${role ?? "none"}) cannot act: clicks are answered and change nothing.`,
  );
}
