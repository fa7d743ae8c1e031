import { createHmac, timingSafeEqual } from "node:crypto";

// Slack's request signing: `v0=` + hex HMAC-SHA256 over `v0:{timestamp}:{raw body}` with the app's signing
// secret, compared in constant time, the timestamp within five minutes of now (either way). Nothing else
// about the request is trusted before this holds.

export const SLACK_TOLERANCE_S = 5 * 60;

export type SignatureCheck = { ok: true } | { ok: false; why: string };

export function slackSignature(secret: string, timestamp: string, body: Buffer | string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:`).update(body).digest("hex")}`;
}

export function checkSlackSignature(
  secret: string,
  headers: { timestamp: string | null; signature: string | null },
  body: Buffer,
  now: Date,
): SignatureCheck {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature)
    return { ok: false, why: "X-Slack-Request-Timestamp and X-Slack-Signature are required." };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, why: "X-Slack-Request-Timestamp is not a Unix time." };
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > SLACK_TOLERANCE_S)
    return { ok: false, why: "The request's timestamp is more than five minutes from now." };
  const expected = Buffer.from(slackSignature(secret, timestamp, body), "utf8");
  const given = Buffer.from(signature, "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, why: "The request's signature does not match." };
  return { ok: true };
}
