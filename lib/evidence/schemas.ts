import { z } from "zod";
import { BUNDLE_FORMAT, PACK_FORMAT, SIGNATURE_ALGORITHM } from "./format";

// The API's contract for packs and keys (the OpenAPI document is built from these). A pack's lists are
// described, not re-validated: the server wrote them, and `settle evidence verify` is their check.

const time = z.string().meta({ format: "date-time" });

export const evidenceSignatureSchema = z
  .object({
    algorithm: z.literal(SIGNATURE_ALGORITHM),
    key_id: z.string().describe("sek_ and the first 16 hex digits of the SHA-256 of the public key."),
    public_key: z.string().describe("The signer's public key, base64 DER (SubjectPublicKeyInfo)."),
    value: z.string().describe("Ed25519 over the UTF-8 bytes of the canonical JSON of `pack`, base64."),
  })
  .meta({ id: "EvidenceSignature" });

const entries = z.array(z.record(z.string(), z.unknown()));

export const evidencePackSchema = z
  .object({
    format: z.literal(PACK_FORMAT),
    pack: z.object({
      issued_at: time,
      issuer: z.object({ name: z.literal("Settle"), url: z.string() }),
      invocation: z
        .record(z.string(), z.unknown())
        .describe("The call's identities: runtime, task, invocation, tool, key."),
      arguments: z.object({
        digest: z.string().nullable(),
        value: z.unknown().describe("As stored: secrets redacted."),
      }),
      final: z.record(z.string(), z.unknown()).describe("The final state, its decision and the reason."),
      attempts: entries.describe("Every attempt record with its envelope, in the fold's order."),
      transitions: entries.describe("Every change of status or commit state."),
      actions: entries.describe("Every operator and Settle action (the invocation's audit trail)."),
      guard_refusals: entries.describe(
        "The guard's refusals that name this call: a second try of its key, a possible duplicate of it.",
      ),
      approvals: entries.describe("Who approved, when, and the arguments digest they approved."),
      verifications: entries.describe("Settle's verification requests with every answer."),
      contents: z
        .record(z.string(), z.object({ count: z.number().int(), sha256: z.string() }))
        .describe("Each list's count and SHA-256, so a missing or changed entry is named."),
      chain: z
        .object({ links: entries })
        .nullable()
        .describe("The hash-chain links proving each entry; null while no chain is kept for these rows."),
    }),
    signature: evidenceSignatureSchema,
  })
  .meta({ id: "EvidencePack" });

export const evidenceBundleSchema = z
  .object({
    format: z.literal(BUNDLE_FORMAT),
    bundle: z.record(z.string(), z.unknown()),
    packs: z.array(evidencePackSchema),
    signature: evidenceSignatureSchema,
  })
  .meta({ id: "EvidenceBundle" });

export const evidenceKeysSchema = z
  .object({
    keys: z.array(
      z.object({
        key_id: z.string(),
        algorithm: z.literal(SIGNATURE_ALGORITHM),
        public_key: z.string().describe("base64 DER, SubjectPublicKeyInfo."),
        public_key_pem: z.string(),
        created_at: time,
        retired_at: time.nullable().describe("When it stopped signing; packs it signed still verify with it."),
      }),
    ),
  })
  .meta({ id: "EvidenceKeys" });
