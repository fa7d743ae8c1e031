import { createHash, randomBytes } from "node:crypto";

// The one token format for runtime ingest keys (`stl_rk_`) and operators'
// personal access tokens (`stl_pat_`): `<prefix><8 id chars>_<32 secret chars>`.
// Only the SHA-256 of the whole token is stored. See docs/decisions/003-tokens.md.

const SECRET_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

function randomString(length: number, alphabet: string): string {
  const bytes = randomBytes(length * 2);
  let out = "";
  // Rejection sampling keeps every character equally likely.
  for (const b of bytes) {
    if (b < Math.floor(256 / alphabet.length) * alphabet.length) out += alphabet[b % alphabet.length];
    if (out.length === length) return out;
  }
  return out + randomString(length - out.length, alphabet);
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** A new token: the secret to show once, its visible prefix, and the hash to store. */
export function newToken(kind: "stl_rk_" | "stl_pat_"): { token: string; prefix: string; hash: string } {
  const prefix = `${kind}${randomString(8, ID_ALPHABET)}`;
  const token = `${prefix}_${randomString(32, SECRET_ALPHABET)}`;
  return { token, prefix, hash: hashToken(token) };
}
