import "server-only";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { recordAdminAction } from "../audit/admin";
import { parseRole, type Role } from "../identity/roles";

// Which Settle person a Slack user acts as. A Slack user id is Slack's (U… or W…); one person may have
// more than one (several workspaces), one Slack user is at most one person. Adding and removing is audited.

export const slackUserIdSchema = z
  .string()
  .trim()
  .regex(/^[UW][A-Z0-9]{2,30}$/, "a Slack user id (U… or W…)")
  .describe("The Slack user id (U… or W…): in Slack, the person's profile → ⋮ → Copy member ID.");

export const newSlackLinkSchema = z
  .object({
    email: z.string().trim().max(320).describe("The Settle person's email."),
    slack_user_id: slackUserIdSchema,
  })
  .meta({ id: "NewSlackLink" });

export const slackLinkSchema = z
  .object({
    slack_user_id: z.string(),
    email: z.string(),
    role: z.string().nullable().describe("The person's role now: only operator, manager and admin can act."),
    active: z.boolean(),
    created_by: z.string(),
    created_at: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "SlackLink" });
export type SlackLinkInfo = z.infer<typeof slackLinkSchema>;

type Row = {
  slack_user_id: string;
  email: string;
  role: string | null;
  banned: boolean | null;
  created_by: string;
  created_at: Date | string;
};

const SELECT_LINKS = `
  SELECT l.slack_user_id, u.email, u.role, u.banned, l.created_by, l.created_at
    FROM slack_links l JOIN "user" u ON u.id = l.user_id`;

const toInfo = (r: Row): SlackLinkInfo => ({
  slack_user_id: r.slack_user_id,
  email: r.email,
  role: r.role,
  active: !r.banned,
  created_by: r.created_by,
  created_at: new Date(r.created_at).toISOString(),
});

export async function listSlackLinks(db: Db, userId?: string): Promise<SlackLinkInfo[]> {
  const rows = userId
    ? await db.driver.query<Row>(`${SELECT_LINKS} WHERE l.user_id = $1 ORDER BY l.created_at`, [userId])
    : await db.driver.query<Row>(`${SELECT_LINKS} ORDER BY u.email, l.created_at`);
  return rows.map(toInfo);
}

/** Who a Slack user acts as: their email and role now (null role: deactivated or none). */
export type LinkedPerson = { email: string; role: Role | null };

export async function getLinkedPerson(db: Db, slackUserId: string): Promise<LinkedPerson | null> {
  const [row] = await db.driver.query<Row>(`${SELECT_LINKS} WHERE l.slack_user_id = $1`, [slackUserId]);
  if (!row) return null;
  return { email: row.email, role: row.banned ? null : parseRole(row.role) };
}

/** Links (or moves) a Slack user to a person; audited in the same transaction. */
export async function linkSlackUser(
  q: Sql,
  link: { userId: string; email: string; slackUserId: string },
  actor: string,
): Promise<void> {
  const [before] = await q.query<{ email: string }>(
    `SELECT u.email FROM slack_links l JOIN "user" u ON u.id = l.user_id WHERE l.slack_user_id = $1 FOR UPDATE OF l`,
    [link.slackUserId],
  );
  await q.query(
    `INSERT INTO slack_links (slack_user_id, user_id, created_by, created_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (slack_user_id) DO UPDATE SET user_id = $2, created_by = $3, created_at = now()`,
    [link.slackUserId, link.userId, actor],
  );
  await recordAdminAction(q, {
    actor,
    action: "slack_link_added",
    targetType: "slack_link",
    targetId: link.slackUserId,
    before: before ? { email: before.email } : null,
    after: { email: link.email },
  });
}

export async function addSlackLink(
  db: Db,
  input: z.infer<typeof newSlackLinkSchema>,
  actor: string,
): Promise<SlackLinkInfo> {
  const user = await db.prisma.user.findUnique({ where: { email: input.email.toLowerCase() } });
  if (!user) throw new ApiError("NOT_FOUND", `No person ${input.email} in Settle.`, { path: "email" });
  await db.driver.transaction((tx) =>
    linkSlackUser(tx, { userId: user.id, email: user.email, slackUserId: input.slack_user_id }, actor),
  );
  const [row] = await db.driver.query<Row>(`${SELECT_LINKS} WHERE l.slack_user_id = $1`, [input.slack_user_id]);
  return toInfo(row!);
}

/**
 * Removes a Slack user's link. `ownerId` limits it to the links of one person (Account → Slack: a person removes
 * their own); another person's link is then not found, as if it did not exist.
 */
export async function removeSlackLink(
  db: Db,
  slackUserId: string,
  actor: string,
  ownerId?: string,
): Promise<{ deleted: true }> {
  await db.driver.transaction(async (tx) => {
    const [gone] = await tx.query<{ email: string }>(
      `DELETE FROM slack_links l USING "user" u
        WHERE u.id = l.user_id AND l.slack_user_id = $1 AND ($2::text IS NULL OR l.user_id = $2::text)
        RETURNING u.email`,
      [slackUserId, ownerId ?? null],
    );
    if (!gone)
      throw new ApiError(
        "NOT_FOUND",
        ownerId ? `${slackUserId} is not linked to you.` : `No Slack link for ${slackUserId}.`,
      );
    await recordAdminAction(tx, {
      actor,
      action: "slack_link_removed",
      targetType: "slack_link",
      targetId: slackUserId,
      before: { email: gone.email },
    });
  });
  return { deleted: true };
}
