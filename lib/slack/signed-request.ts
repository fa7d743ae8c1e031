import "server-only";
import type { Db } from "../db/client";
import { ApiError } from "../errors";
import { readBodyBytes } from "../http/read-body";
import { loadSlackApp, type SlackApp } from "./settings";
import { checkSlackSignature, SLACK_TOLERANCE_S } from "./signature";

// What every request from Slack (interactivity, slash commands) passes before anything in it is believed: the
// app is set up, the v0 signature over the raw body holds within the 5-minute window, and the body was not
// taken before. Anything else is a 401 that changes nothing.

export const unauthenticatedSlack = (why: string) =>
  new ApiError("UNAUTHENTICATED", `Not a signed Slack request: ${why}`);

/** A signature seen before is a replay. Seen ones older than the window are swept: the timestamp refuses those. */
async function firstTimeSeen(db: Db, signature: string, now: Date): Promise<boolean> {
  const fresh = await db.driver.query(
    `INSERT INTO slack_requests_seen (signature, seen_at) VALUES ($1, $2::timestamptz) ON CONFLICT DO NOTHING RETURNING 1`,
    [signature, now.toISOString()],
  );
  await db.driver.query(`DELETE FROM slack_requests_seen WHERE seen_at < $1::timestamptz`, [
    new Date(now.getTime() - 2 * SLACK_TOLERANCE_S * 1000).toISOString(),
  ]);
  return fresh.length === 1;
}

/** The raw body of a request Slack signed, and the app it was signed for; throws a 401 otherwise. */
export async function readSignedSlackRequest(
  db: Db,
  req: Request,
  limits: { maxBytes: number; advice: string },
  now: Date,
): Promise<{ app: SlackApp; raw: Buffer }> {
  const raw = await readBodyBytes(req, limits);
  const app = await loadSlackApp(db);
  if (!app)
    throw unauthenticatedSlack(
      "the Slack app is not set up in Settle (PUT /api/v1/admin/integrations/slack, docs/slack.md).",
    );
  const signature = req.headers.get("x-slack-signature");
  const check = checkSlackSignature(
    app.signingSecret,
    { timestamp: req.headers.get("x-slack-request-timestamp"), signature },
    raw,
    now,
  );
  if (!check.ok) throw unauthenticatedSlack(check.why);
  if (!(await firstTimeSeen(db, signature!, now)))
    throw unauthenticatedSlack("this request was already received once.");
  return { app, raw };
}
