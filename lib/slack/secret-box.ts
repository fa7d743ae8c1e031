import "server-only";
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { authSecret } from "../identity/secret";

// The Slack app's signing secret and bot token must be read back (one signs, one posts), so they are kept
// encrypted, not hashed: AES-256-GCM under a key derived (HKDF-SHA256) from the auth secret that every
// instance already shares (decision 041). A database dump alone does not give them away. A changed auth
// secret makes them unreadable: the admin enters them again.

const PREFIX = "v1.";

function key(): Buffer {
  return Buffer.from(hkdfSync("sha256", authSecret(), "settle", "slack-app-secrets", 32));
}

export function sealSecret(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key(), iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `${PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
}

/** The secret, or null when it cannot be opened (another auth secret sealed it, or it was altered). */
export function openSecret(sealed: string): string | null {
  if (!sealed.startsWith(PREFIX)) return null;
  const raw = Buffer.from(sealed.slice(PREFIX.length), "base64url");
  if (raw.length < 28) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key(), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
