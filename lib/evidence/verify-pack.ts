import { createHash, verify as verifySignature } from "node:crypto";
import { CHAINED } from "../chain/entries";
import { contentHash, linkHash } from "../chain/link";
import { parseExactJson } from "../json/exact";
import { canonicalJson, digestOf } from "./canonical";
import {
  BUNDLE_FORMAT,
  CHAINED_SECTIONS,
  LATER_SECTIONS,
  PACK_FORMAT,
  PACK_SECTIONS,
  readPublicKey,
  SIGNATURE_ALGORITHM,
  type EvidenceBundle,
  type EvidencePack,
  type Signature,
} from "./format";

// The offline check of a pack or a bundle (`settle evidence verify`): no database, no network. Everything it
// refuses, it refuses with the first reason it finds, in words an auditor can act on.

export type TrustedKey = { keyId: string; der: Buffer };

export type Verified = {
  ok: true;
  kind: "pack" | "bundle";
  packs: number;
  keyId: string;
  /** Whether the signing key is one of the keys given (--key); false when none was given. */
  trusted: boolean;
  /** Packs whose entries carry no chain links (a Settle that kept no chain for them). */
  unchained: number;
};
export type Refused = { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const isCanonicalBase64 = (text: string) => Buffer.from(text, "base64").toString("base64") === text;

function checkSignature(body: unknown, signature: unknown, keys: readonly TrustedKey[] | null): Refused | string {
  if (!isObject(signature)) return { ok: false, reason: "it has no signature" };
  const s = signature as Partial<Signature>;
  if (s.algorithm !== SIGNATURE_ALGORITHM)
    return { ok: false, reason: `its signature is not ${SIGNATURE_ALGORITHM} (${String(s.algorithm)})` };
  if (typeof s.public_key !== "string" || typeof s.value !== "string" || typeof s.key_id !== "string")
    return { ok: false, reason: "its signature lacks the key id, public key or value" };
  // Base64 has spare bits at its end that decoders ignore: only the one spelling of the bytes is accepted, so
  // no character of a pack can change without it being refused.
  if (!isCanonicalBase64(s.value) || !isCanonicalBase64(s.public_key))
    return {
      ok: false,
      reason: "its signature's value or public key is not canonical base64 (a character was changed)",
    };
  const signer = readPublicKey(s.public_key);
  if (!signer) return { ok: false, reason: "its signature's public key is not an Ed25519 key" };
  if (signer.keyId !== s.key_id)
    return { ok: false, reason: `its signature names key ${s.key_id} but carries the public key of ${signer.keyId}` };
  if (keys && !keys.some((k) => k.keyId === signer.keyId && k.der.equals(signer.der)))
    return {
      ok: false,
      reason: `it was signed with key ${signer.keyId}, which is not among the keys given (${keys.map((k) => k.keyId).join(", ")})`,
    };
  const good = verifySignature(
    null,
    Buffer.from(canonicalJson(body), "utf8"),
    signer.key,
    Buffer.from(s.value, "base64"),
  );
  return good ? signer.keyId : { ok: false, reason: "" };
}

/** Which section of a pack no longer matches what it states of itself, in words; null when all do. */
function sectionProblem(pack: Record<string, unknown>): string | null {
  const contents = pack.contents;
  if (!isObject(contents)) return "its contents list is missing";
  for (const section of PACK_SECTIONS) {
    const entries = pack[section];
    const stated = contents[section] as { count?: unknown; sha256?: unknown } | undefined;
    if (entries === undefined && stated === undefined && LATER_SECTIONS.includes(section)) continue;
    if (!Array.isArray(entries) || !isObject(stated)) return `its ${section} are missing`;
    if (stated.count !== entries.length)
      return `${section}: ${entries.length} entries where the pack lists ${String(stated.count)} (an entry was ${entries.length < Number(stated.count) ? "removed" : "added"})`;
    if (digestOf(entries) !== stated.sha256) return `${section}: an entry was changed (its digest differs)`;
  }
  return null;
}

/** Where a chained column's value is in a pack's entry, when not under the column's own name. */
const PACK_PATHS: Record<string, (entry: Record<string, unknown>, pack: Record<string, unknown>) => unknown> = {
  // A changed byte may have renamed `invocation`: then nothing matches, and the link is refused, not thrown on.
  runtime_id: (_, pack) => (pack.invocation as Record<string, unknown> | undefined)?.runtime_id,
  invocation_uid: (_, pack) => (pack.invocation as Record<string, unknown> | undefined)?.invocation_uid,
  attempt_no: (entry) => entry.attempt,
  retry_directive: (entry) => (entry.retry as Record<string, unknown> | undefined)?.directive,
  not_before: (entry) => ("retry" in entry ? (entry.retry as Record<string, unknown>).not_before : entry.not_before),
  max_attempts_remaining: (entry) => (entry.retry as Record<string, unknown> | undefined)?.max_attempts_remaining,
};

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/** What is wrong with one link: its hashes, or its content against the pack's entry (column by column). */
function linkProblem(link: Record<string, unknown>, pack: Record<string, unknown>): string | null {
  const { entry, content, content_sha256, prev, hash } = link;
  if (typeof content !== "string" || typeof content_sha256 !== "string" || typeof prev !== "string")
    return `chain link for ${String(entry)} lacks its content, content hash or predecessor`;
  if (contentHash(content).toString("hex") !== content_sha256)
    return `chain link for ${String(entry)}: its content does not match its content hash`;
  if (linkHash(Buffer.from(prev, "hex"), Buffer.from(content_sha256, "hex")).toString("hex") !== hash)
    return `chain link for ${String(entry)}: its link hash is not SHA-256(prev ‖ content hash)`;
  const [section, index] = String(entry).split("/") as [keyof typeof CHAINED_SECTIONS, string];
  const kind = CHAINED_SECTIONS[section];
  const item = kind ? (pack[section] as unknown[] | undefined)?.[Number(index)] : undefined;
  if (!isObject(item)) return `chain link for ${String(entry)} names no entry of the pack`;
  let values: unknown;
  try {
    values = parseExactJson(content);
  } catch {
    return `chain link for ${String(entry)}: its content is not JSON`;
  }
  const columns = CHAINED[kind].columns;
  if (!Array.isArray(values) || values[0] !== kind || values.length !== columns.length + 1)
    return `chain link for ${String(entry)}: its content is not a ${kind} entry`;
  for (let i = 0; i < columns.length; i++) {
    const [column] = columns[i]!;
    const inPack = PACK_PATHS[column] ? PACK_PATHS[column](item, pack) : item[column];
    if (!same(values[i + 1], inPack)) return `${String(entry)}: its ${column} differs from what its chain recorded`;
  }
  return null;
}

/** Chain links, when present, hold, match their entries, and cover every entry not listed as unchained. */
function chainProblem(pack: Record<string, unknown>): string | null {
  const chain = pack.chain;
  if (chain === null) return null;
  if (!isObject(chain) || !Array.isArray(chain.links) || !Array.isArray(chain.unchained))
    return "its chain is not a list of links";
  const named = new Set<string>(chain.unchained.map(String));
  for (const link of chain.links as unknown[]) {
    if (!isObject(link) || typeof link.entry !== "string" || typeof link.hash !== "string")
      return "a chain link lacks its entry or hash";
    const problem = linkProblem(link, pack);
    if (problem) return problem;
    named.add(link.entry);
  }
  for (const section of Object.keys(CHAINED_SECTIONS) as Array<keyof typeof CHAINED_SECTIONS>) {
    const entries = pack[section];
    if (entries === undefined && LATER_SECTIONS.includes(section)) continue;
    if (!Array.isArray(entries)) return `its ${section} are not a list`;
    for (let i = 0; i < entries.length; i++)
      if (!named.has(`${section}/${i}`)) return `${section}/${i} has no chain link`;
  }
  return null;
}

function verifyPackValue(
  doc: unknown,
  keys: readonly TrustedKey[] | null,
): Refused | { keyId: string; chained: boolean } {
  if (!isObject(doc) || doc.format !== PACK_FORMAT) return { ok: false, reason: `it is not a ${PACK_FORMAT} document` };
  const pack = doc.pack;
  if (!isObject(pack)) return { ok: false, reason: "it has no pack" };
  const signed = checkSignature(pack, doc.signature, keys);
  if (typeof signed !== "string") {
    if (signed.reason) return signed;
    const problem = sectionProblem(pack) ?? chainProblem(pack);
    return {
      ok: false,
      reason: `the signature does not match the content: ${problem ?? "a field outside the entry lists was changed, or the signature belongs to another document"}`,
    };
  }
  // Signed as it is: what it states of itself must hold too (a signer's own mistake is still refused).
  const problem = sectionProblem(pack) ?? chainProblem(pack);
  if (problem) return { ok: false, reason: problem };
  return { keyId: signed, chained: pack.chain !== null };
}

const packName = (p: unknown, i: number) => {
  const inv = isObject(p) && isObject(p.pack) && isObject(p.pack.invocation) ? p.pack.invocation : null;
  return inv ? `pack ${i + 1} (${String(inv.runtime)}/${String(inv.invocation_id)})` : `pack ${i + 1}`;
};

function verifyBundleValue(doc: Record<string, unknown>, keys: readonly TrustedKey[] | null): Verified | Refused {
  const bundle = doc.bundle;
  if (!isObject(bundle) || !Array.isArray(bundle.index) || !Array.isArray(doc.packs))
    return { ok: false, reason: "it has no bundle index or packs" };
  const signed = checkSignature(bundle, doc.signature, keys);
  if (typeof signed !== "string")
    return signed.reason
      ? signed
      : {
          ok: false,
          reason: "the bundle's signature does not match its index (a pack was listed, removed or swapped)",
        };
  const index = bundle.index as Array<{ sha256?: unknown; invocation_id?: unknown }>;
  const packs = doc.packs as unknown[];
  let unchained = 0;
  for (let i = 0; i < index.length; i++) {
    const pack = packs[i];
    if (pack === undefined)
      return {
        ok: false,
        reason: `the bundle lists ${index.length} packs but holds ${packs.length}: ${String(index[i]?.invocation_id)} is missing`,
      };
    const checked = verifyPackValue(pack, keys);
    if ("ok" in checked) return { ok: false, reason: `${packName(pack, i)}: ${checked.reason}` };
    if (!checked.chained) unchained++;
    if (createHash("sha256").update(canonicalJson(pack), "utf8").digest("hex") !== index[i]?.sha256)
      return { ok: false, reason: `${packName(pack, i)} is not the pack the bundle's index lists at its place` };
  }
  if (packs.length > index.length)
    return { ok: false, reason: `the bundle holds ${packs.length} packs but its index lists ${index.length}` };
  return { ok: true, kind: "bundle", packs: packs.length, keyId: signed, trusted: keys !== null, unchained };
}

/** Checks a pack or a bundle as the text of its file. */
export function verifyEvidence(text: string, keys: readonly TrustedKey[] | null): Verified | Refused {
  let doc: unknown;
  try {
    doc = parseExactJson(text);
  } catch (error) {
    return { ok: false, reason: `it is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (isObject(doc) && doc.format === BUNDLE_FORMAT) return verifyBundleValue(doc as EvidenceBundle, keys);
  const checked = verifyPackValue(doc as EvidencePack, keys);
  if ("ok" in checked) return checked;
  return {
    ok: true,
    kind: "pack",
    packs: 1,
    keyId: checked.keyId,
    trusted: keys !== null,
    unchained: checked.chained ? 0 : 1,
  };
}
