import { hashToken, newToken } from "../auth/tokens";
import type { Db } from "../db/client";

// Runtime ingest keys: `stl_rk_<id>_<secret>`. Only the SHA-256 of the whole
// key is stored; the `stl_rk_<id>` prefix identifies it in lists and logs.
// See docs/decisions/003-tokens.md.

export const RUNTIME_KEY_PREFIX = "stl_rk_";

export type RuntimeKeyInfo = {
  prefix: string;
  name: string;
  runtime: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

export async function createRuntimeKey(db: Db, runtimeName: string, name = "default"): Promise<{ key: string; prefix: string; runtime: string }> {
  const runtime = await db.prisma.runtime.upsert({ where: { name: runtimeName }, create: { name: runtimeName }, update: {} });
  const { token: key, prefix, hash } = newToken(RUNTIME_KEY_PREFIX);
  await db.prisma.runtimeKey.create({ data: { runtimeId: runtime.id, name, prefix, hash } });
  return { key, prefix, runtime: runtime.name };
}

export async function listRuntimeKeys(db: Db): Promise<RuntimeKeyInfo[]> {
  const keys = await db.prisma.runtimeKey.findMany({ include: { runtime: true }, orderBy: { createdAt: "asc" } });
  return keys.map((k) => ({
    prefix: k.prefix,
    name: k.name,
    runtime: k.runtime.name,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  }));
}

/** Revokes by prefix (`stl_rk_ab12cd34`); the key stops working on its next request. */
export async function revokeRuntimeKey(db: Db, prefix: string): Promise<RuntimeKeyInfo | null> {
  const found = await db.prisma.runtimeKey.findUnique({ where: { prefix }, include: { runtime: true } });
  if (!found) return null;
  const k = found.revokedAt
    ? found
    : await db.prisma.runtimeKey.update({ where: { prefix }, data: { revokedAt: new Date() }, include: { runtime: true } });
  return {
    prefix: k.prefix,
    name: k.name,
    runtime: k.runtime.name,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  };
}

export type KeyLookup =
  | { status: "valid"; runtime: { id: string; name: string } }
  | { status: "revoked" }
  | { status: "unknown" };

// Runs on every request: straight on the driver, as a prepared statement, not through Prisma.
export async function lookupRuntimeKey(db: Db, key: string): Promise<KeyLookup> {
  const rows = await db.driver.query<{ id: string; runtime_id: string; runtime_name: string; revoked: boolean; stale: boolean }>(
    `SELECT k.id::text, k.runtime_id::text, r.name AS runtime_name, k.revoked_at IS NOT NULL AS revoked,
            (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
       FROM runtime_keys k JOIN runtimes r ON r.id = k.runtime_id WHERE k.hash = $1`,
    [hashToken(key)],
    { prepareAs: "settle_runtime_key" },
  );
  const row = rows[0];
  if (!row) return { status: "unknown" };
  if (row.revoked) return { status: "revoked" };
  // Recorded at most once a minute, so a busy key does not write on every request.
  if (row.stale) await db.driver.query(`UPDATE runtime_keys SET last_used_at = now() WHERE id = $1::uuid`, [row.id]);
  return { status: "valid", runtime: { id: row.runtime_id, name: row.runtime_name } };
}
