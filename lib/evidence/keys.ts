import "server-only";
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { ApiError } from "../errors";
import { openWithAuthSecret, sealWithAuthSecret } from "../identity/sealed";
import { canonicalJson } from "./canonical";
import { keyIdOf, publicKeyPem, SIGNATURE_ALGORITHM, type PublicKeyInfo, type Signature } from "./format";

// Settle's evidence signing keys (table evidence_keys). One is made at first start (lib/first-run.ts), as the
// auth secret is; `settle evidence key --rotate` retires it and makes the next. The private key is sealed with
// AES-256-GCM under a key derived (HKDF) from the auth secret, so a database dump alone cannot sign packs; a
// retired key keeps only its public half, so the packs it signed still verify.

// Every instance may start at once: one makes the key, the others find it.
const KEY_LOCK = 7_241_041;

type KeyRow = { id: string; public_key: string; private_key: string | null; created_at: Date; retired_at: Date | null };

const SEALED_AS = "evidence-signing-key";

function unseal(row: KeyRow): KeyObject {
  const der = row.private_key === null ? null : openWithAuthSecret(SEALED_AS, row.private_key);
  if (row.private_key === null) throw new ApiError("INTERNAL", `Evidence key ${row.id} has no private key.`);
  // Settle's own setting, not the caller's: a 500 that says what an admin must do.
  if (!der)
    throw new ApiError(
      "INTERNAL",
      `Evidence key ${row.id} was sealed under another auth secret (SETTLE_AUTH_SECRET changed?): set the secret it was made with, or make a new key with: settle evidence key --rotate`,
    );
  return createPrivateKey({ key: der, format: "der", type: "pkcs8" });
}

function newKeyRow(now: Date): KeyRow {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const der = publicKey.export({ format: "der", type: "spki" });
  return {
    id: keyIdOf(der),
    public_key: der.toString("base64"),
    private_key: sealWithAuthSecret(SEALED_AS, privateKey.export({ format: "der", type: "pkcs8" })),
    created_at: now,
    retired_at: null,
  };
}

const SELECT_KEYS = `SELECT id, public_key, private_key, created_at, retired_at FROM evidence_keys`;

async function insertKey(tx: Pick<Sql, "query">, row: KeyRow): Promise<void> {
  await tx.query(
    `INSERT INTO evidence_keys (id, public_key, private_key, created_at, retired_at) VALUES ($1, $2, $3, $4::timestamptz, NULL)`,
    [row.id, row.public_key, row.private_key, row.created_at.toISOString()],
  );
}

/** The active key, made if there is none (first start). Returns its id and whether it was made now. */
export async function ensureEvidenceKey(db: Db, now = new Date()): Promise<{ keyId: string; created: boolean }> {
  return db.driver.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock($1)`, [KEY_LOCK]);
    const [active] = await tx.query<KeyRow>(`${SELECT_KEYS} WHERE retired_at IS NULL`);
    if (active) return { keyId: active.id, created: false };
    const row = newKeyRow(now);
    await insertKey(tx, row);
    return { keyId: row.id, created: true };
  });
}

/** Retires the active key (its private half is dropped) and makes the next one. */
export async function rotateEvidenceKey(db: Db, now = new Date()): Promise<{ keyId: string; retired: string[] }> {
  return db.driver.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock($1)`, [KEY_LOCK]);
    const retired = await tx.query<{ id: string }>(
      `UPDATE evidence_keys SET retired_at = $1::timestamptz, private_key = NULL WHERE retired_at IS NULL RETURNING id`,
      [now.toISOString()],
    );
    const row = newKeyRow(now);
    await insertKey(tx, row);
    return { keyId: row.id, retired: retired.map((r) => r.id) };
  });
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** Every key's public half, the active one first, then newest first: what /.well-known/settle-evidence-key answers. */
export async function listEvidenceKeys(db: Db): Promise<PublicKeyInfo[]> {
  const rows = await db.driver.query<KeyRow>(`${SELECT_KEYS} ORDER BY retired_at IS NOT NULL, created_at DESC, id`);
  return rows.map((r) => ({
    key_id: r.id,
    algorithm: SIGNATURE_ALGORITHM,
    public_key: r.public_key,
    public_key_pem: publicKeyPem(Buffer.from(r.public_key, "base64")),
    created_at: iso(r.created_at)!,
    retired_at: iso(r.retired_at),
  }));
}

/** Signs a value's canonical JSON with the active key (made first if there is none). */
export async function signEvidence(db: Db, value: unknown): Promise<Signature> {
  await ensureEvidenceKey(db);
  const [active] = await db.driver.query<KeyRow>(`${SELECT_KEYS} WHERE retired_at IS NULL ORDER BY created_at DESC`);
  if (!active) throw new ApiError("INTERNAL", "No evidence key is active.");
  const value64 = sign(null, Buffer.from(canonicalJson(value), "utf8"), unseal(active)).toString("base64");
  return { algorithm: SIGNATURE_ALGORITHM, key_id: active.id, public_key: active.public_key, value: value64 };
}
