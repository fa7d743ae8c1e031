import { createHash, createPublicKey, type KeyObject } from "node:crypto";

// What an evidence pack and a bundle of packs are on the wire (docs/audit.md "Evidence packs"). Pure and
// free of the database: the server writes these shapes, `settle evidence verify` reads them offline.

export const PACK_FORMAT = "settle.evidence-pack/1";
export const BUNDLE_FORMAT = "settle.evidence-bundle/1";
export const SIGNATURE_ALGORITHM = "Ed25519";

/** The lists of a pack whose count and digest `contents` states, so a missing or changed entry is named. */
export const PACK_SECTIONS = [
  "attempts",
  "transitions",
  "actions",
  "guard_refusals",
  "approvals",
  "verifications",
] as const;
export type PackSection = (typeof PACK_SECTIONS)[number];

export type Signature = {
  algorithm: typeof SIGNATURE_ALGORITHM;
  /** sek_ and the first 16 hex digits of the SHA-256 of the public key (DER, SubjectPublicKeyInfo). */
  key_id: string;
  /** The signer's public key, base64 DER (SubjectPublicKeyInfo): check it is Settle's with --key. */
  public_key: string;
  /** Ed25519 over the UTF-8 bytes of the canonical JSON of `pack` (or `bundle`), base64. */
  value: string;
};

export type SectionDigest = { count: number; sha256: string };

/**
 * The hash-chain link of one entry of the pack (docs/audit.md "What is chained"): its chain (the runtime's id)
 * and place, its canonical content as the chain hashed it, that content's SHA-256, its predecessor's link hash
 * and its own (SHA-256 of prev ‖ content hash), hex.
 */
export type ChainLink = {
  entry: string;
  chain: string;
  seq: number;
  content: string;
  content_sha256: string;
  prev: string;
  hash: string;
};

/** The lists whose entries a chain covers, and the chain kind of each. */
export const CHAINED_SECTIONS = {
  attempts: "attempt",
  transitions: "transition",
  actions: "action",
  guard_refusals: "guard",
} as const;

/** Sections a pack made before they existed lacks (with their `contents` entry): such a pack still verifies. */
export const LATER_SECTIONS: readonly PackSection[] = ["guard_refusals"];

export type PackBody = {
  issued_at: string;
  issuer: { name: "Settle"; url: string };
  invocation: Record<string, unknown> & { invocation_id: string; runtime: string; task_id: string };
  arguments: { digest: string | null; value: unknown };
  final: Record<string, unknown>;
  attempts: unknown[];
  transitions: unknown[];
  actions: unknown[];
  /** The guard's refusals that name this call (a second try of its key, a possible duplicate of it). */
  guard_refusals: unknown[];
  approvals: unknown[];
  verifications: unknown[];
  contents: Record<PackSection, SectionDigest>;
  /** The chain links proving each entry, and the entries no chain covers (written before it began); null: none is chained. */
  chain: { links: ChainLink[]; unchained: string[] } | null;
};

export type EvidencePack = { format: typeof PACK_FORMAT; pack: PackBody; signature: Signature };

export type BundleBody = {
  issued_at: string;
  issuer: { name: "Settle"; url: string };
  /** What was exported: a task, or a time range of first-seen times. */
  query: Record<string, string | null>;
  /** Every pack in order, by its invocation and the SHA-256 of its canonical JSON. */
  index: Array<{ runtime: string; invocation_id: string; sha256: string }>;
};

export type EvidenceBundle = {
  format: typeof BUNDLE_FORMAT;
  bundle: BundleBody;
  packs: EvidencePack[];
  signature: Signature;
};

/** A public key as the CLI and /.well-known/settle-evidence-key give it. */
export type PublicKeyInfo = {
  key_id: string;
  algorithm: typeof SIGNATURE_ALGORITHM;
  /** base64 DER, SubjectPublicKeyInfo. */
  public_key: string;
  public_key_pem: string;
  created_at: string;
  /** When it stopped signing (a rotation); its packs still verify with it. */
  retired_at: string | null;
};

export function keyIdOf(publicKeyDer: Buffer): string {
  return `sek_${createHash("sha256").update(publicKeyDer).digest("hex").slice(0, 16)}`;
}

export function publicKeyPem(publicKeyDer: Buffer): string {
  return createPublicKey({ key: publicKeyDer, format: "der", type: "spki" })
    .export({ format: "pem", type: "spki" })
    .toString();
}

/** A public key from PEM or base64 DER; null when it is neither an Ed25519 key. */
export function readPublicKey(text: string): { keyId: string; key: KeyObject; der: Buffer } | null {
  try {
    const trimmed = text.trim();
    const key = trimmed.startsWith("-----BEGIN")
      ? createPublicKey(trimmed)
      : createPublicKey({ key: Buffer.from(trimmed, "base64"), format: "der", type: "spki" });
    if (key.asymmetricKeyType !== "ed25519") return null;
    const der = key.export({ format: "der", type: "spki" });
    // The DER reader takes trailing bytes: a key is only the exact bytes of its encoding.
    if (!trimmed.startsWith("-----BEGIN") && !der.equals(Buffer.from(trimmed, "base64"))) return null;
    return { keyId: keyIdOf(der), key, der };
  } catch {
    return null;
  }
}
