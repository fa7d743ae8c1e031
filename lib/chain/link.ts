import { createHash } from "node:crypto";

// The link rule, the one piece of the chain outside SQL (docs/audit.md): an entry's link hash is
// SHA-256(its predecessor's link hash || SHA-256 of its canonical content), 32 bytes each. A check without the
// database (the evidence pack's) uses these two functions.

export function linkHash(prev: Uint8Array, content: Uint8Array): Buffer {
  return createHash("sha256").update(prev).update(content).digest();
}

/** SHA-256 of an entry's canonical content (the text `canonicalSql` gives). */
export function contentHash(canonical: string): Buffer {
  return createHash("sha256").update(canonical, "utf8").digest();
}
