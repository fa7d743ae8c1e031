import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// How Settle signs a webhook and how a receiver checks it (Stripe's scheme):
// `Settle-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
// The timestamp is inside the signed text, so an old delivery replayed later
// fails the tolerance check even though its signature is genuine.

export const SIGNATURE_HEADER = "Settle-Signature";
export const DEFAULT_TOLERANCE_S = 300;

/** A new endpoint secret: `whsec_` and 32 random bytes. The whole string is the HMAC key. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

function hmacHex(secret: string, timestampS: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestampS}.${body}`).digest("hex");
}

export function signatureHeader(secret: string, body: string, now: Date): string {
  const t = Math.floor(now.getTime() / 1000);
  return `t=${t},v1=${hmacHex(secret, t, body)}`;
}

export type Verification = { ok: true } | { ok: false; reason: "malformed" | "too_old" | "mismatch" };

/** Checks a `Settle-Signature` header against the raw body, as a receiver should. */
export function verifySignature(
  secret: string,
  header: string | null | undefined,
  body: string,
  options: { now?: Date; toleranceS?: number } = {},
): Verification {
  const parts = new Map<string, string[]>();
  for (const piece of (header ?? "").split(",")) {
    const [key, value] = piece.trim().split("=", 2);
    if (key && value) parts.set(key, [...(parts.get(key) ?? []), value]);
  }
  const t = Number(parts.get("t")?.[0]);
  const candidates = parts.get("v1") ?? [];
  if (!Number.isInteger(t) || candidates.length === 0) return { ok: false, reason: "malformed" };
  const nowS = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowS - t) > (options.toleranceS ?? DEFAULT_TOLERANCE_S)) return { ok: false, reason: "too_old" };
  const expected = Buffer.from(hmacHex(secret, t, body), "hex");
  const matches = candidates.some((c) => {
    const given = Buffer.from(c, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? { ok: true } : { ok: false, reason: "mismatch" };
}
