import "server-only";
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { authSecret } from "./secret";

// What Settle must read back but a database dump must not give away (the Slack app's secrets, the evidence
// signing key): AES-256-GCM under a key derived (HKDF-SHA256) from the auth secret every instance already
// shares, one key per purpose. A changed auth secret makes the sealed values unreadable (null): each owner
// says what to do then. Written as `v1.` and base64url of IV (12 bytes), tag (16) and ciphertext.

const PREFIX = "v1.";

const keyFor = (purpose: string) => Buffer.from(hkdfSync("sha256", authSecret(), "settle", purpose, 32));

export function sealWithAuthSecret(purpose: string, plain: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFor(purpose), iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return `${PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
}

/** The sealed bytes, or null when they cannot be opened (another auth secret sealed them, or they were altered). */
export function openWithAuthSecret(purpose: string, sealed: string): Buffer | null {
  if (!sealed.startsWith(PREFIX)) return null;
  const raw = Buffer.from(sealed.slice(PREFIX.length), "base64url");
  if (raw.length < 28) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyFor(purpose), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
  } catch {
    return null;
  }
}
