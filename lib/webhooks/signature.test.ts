import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newWebhookSecret, signatureHeader, verifySignature } from "./signature";

const secret = "whsec_test-secret";
const body = JSON.stringify({ id: "evt_1", type: "invocation.settled", data: { decision: "do_not_retry" } });
const now = new Date("2026-12-01T04:00:00.000Z");

describe("webhook signatures", () => {
  it("signs t.<body> with HMAC-SHA256 of the secret, as documented", () => {
    const t = Math.floor(now.getTime() / 1000);
    const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
    expect(signatureHeader(secret, body, now)).toBe(`t=${t},v1=${expected}`);
  });

  it("verifies a genuine signature within the tolerance", () => {
    const header = signatureHeader(secret, body, now);
    expect(verifySignature(secret, header, body, { now })).toEqual({ ok: true });
    expect(verifySignature(secret, header, body, { now: new Date(now.getTime() + 299_000) })).toEqual({ ok: true });
  });

  it("refuses a tampered body, another secret, an old timestamp and a malformed header", () => {
    const header = signatureHeader(secret, body, now);
    expect(verifySignature(secret, header, body.replace("do_not_retry", "retry_allowed"), { now })).toEqual({
      ok: false,
      reason: "mismatch",
    });
    expect(verifySignature("whsec_other", header, body, { now })).toEqual({ ok: false, reason: "mismatch" });
    expect(verifySignature(secret, header, body, { now: new Date(now.getTime() + 301_000) })).toEqual({
      ok: false,
      reason: "too_old",
    });
    expect(
      verifySignature(secret, header, body, { now: new Date(now.getTime() + 3_600_000), toleranceS: 7200 }),
    ).toEqual({ ok: true });
    expect(verifySignature(secret, "v1=abc", body, { now })).toEqual({ ok: false, reason: "malformed" });
    expect(verifySignature(secret, null, body, { now })).toEqual({ ok: false, reason: "malformed" });
  });

  it("refuses a replayed signature whose timestamp was changed", () => {
    const header = signatureHeader(secret, body, now);
    const later = Math.floor(now.getTime() / 1000) + 3600;
    const moved = header.replace(/^t=\d+/, `t=${later}`);
    expect(verifySignature(secret, moved, body, { now: new Date(later * 1000) })).toEqual({
      ok: false,
      reason: "mismatch",
    });
  });

  it("makes a different secret every time", () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newWebhookSecret()).not.toBe(a);
  });
});
