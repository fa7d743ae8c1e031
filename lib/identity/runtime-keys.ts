import "server-only";
import { z } from "zod";
import { hashToken, newToken } from "./tokens";
import type { Db } from "../db/client";
import { recordAdminAction } from "../audit/admin";
import { noteSettingsVersion, SETTINGS_VERSION_SQL } from "../db/settings-version";

// Runtime ingest keys: `stl_rk_<id>_<secret>`. Only the SHA-256 of the whole
// key is stored; the `stl_rk_<id>` prefix identifies it in lists and logs.
// See docs/decisions/003-tokens.md.

export const RUNTIME_KEY_PREFIX = "stl_rk_";

const time = z.string().meta({ format: "date-time" });

export const runtimeKeyInfoSchema = z
  .object({
    prefix: z.string().describe("stl_rk_ and 8 characters: names the key; the secret is never stored or shown again."),
    name: z.string(),
    runtime: z.string(),
    created_at: time,
    last_used_at: time.nullable().describe("Updated at most once a minute."),
    revoked_at: time.nullable(),
  })
  .meta({ id: "RuntimeKey" });
export type RuntimeKeyInfo = z.infer<typeof runtimeKeyInfoSchema>;

export async function createRuntimeKey(
  db: Db,
  runtimeName: string,
  name = "default",
  actor = "cli",
): Promise<{ key: string; prefix: string; runtime: string }> {
  const runtime = await db.prisma.runtime.upsert({
    where: { name: runtimeName },
    create: { name: runtimeName },
    update: {},
  });
  const { token: key, prefix, hash } = newToken(RUNTIME_KEY_PREFIX);
  await db.prisma.runtimeKey.create({ data: { runtimeId: runtime.id, name, prefix, hash } });
  await recordAdminAction(db.driver, {
    actor,
    action: "runtime_key_created",
    targetType: "runtime_key",
    targetId: prefix,
    after: { runtime: runtime.name, name },
  });
  return { key, prefix, runtime: runtime.name };
}

type KeyRow = {
  prefix: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  runtime: { name: string };
};

function toInfo(k: KeyRow): RuntimeKeyInfo {
  return {
    prefix: k.prefix,
    name: k.name,
    runtime: k.runtime.name,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  };
}

/** Every key, oldest first; `runtime` keeps one runtime's. */
export async function listRuntimeKeys(db: Db, filter: { runtime?: string } = {}): Promise<RuntimeKeyInfo[]> {
  const keys = await db.prisma.runtimeKey.findMany({
    where: filter.runtime ? { runtime: { name: filter.runtime } } : {},
    include: { runtime: true },
    orderBy: { createdAt: "asc" },
  });
  return keys.map(toInfo);
}

/** Revokes by prefix (`stl_rk_ab12cd34`); the key stops working on its next request. */
export async function revokeRuntimeKey(db: Db, prefix: string, actor = "cli"): Promise<RuntimeKeyInfo | null> {
  return (await revokeRuntimeKeyOnce(db, prefix, actor))?.key ?? null;
}

// A runtime's name is how records, filters and people refer to it: printable, no spaces at the ends.
const printable = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[^\p{Cc}]+$/u, "no control characters");

export const newRuntimeKeySchema = z.object({
  runtime: printable(200).describe("The runtime's name; created if it does not exist yet."),
  name: printable(100).default("default").describe("What the key is for, e.g. the host or deployment."),
});

/** Revokes a key and says whether it had been revoked already (that changes nothing); null when no key has this prefix. */
export async function revokeRuntimeKeyOnce(
  db: Db,
  prefix: string,
  actor = "cli",
): Promise<{ key: RuntimeKeyInfo; already_revoked: boolean } | null> {
  const { count } = await db.prisma.runtimeKey.updateMany({
    where: { prefix, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  const found = await db.prisma.runtimeKey.findUnique({ where: { prefix }, include: { runtime: true } });
  if (!found) return null;
  const key = toInfo(found);
  if (count > 0) {
    await recordAdminAction(db.driver, {
      actor,
      action: "runtime_key_revoked",
      targetType: "runtime_key",
      targetId: prefix,
      before: { runtime: key.runtime, name: key.name, revoked_at: null },
      after: { runtime: key.runtime, name: key.name, revoked_at: key.revoked_at },
    });
  }
  return { key, already_revoked: count === 0 };
}

/** Every runtime's name, for pickers and filters. */
export async function listRuntimeNames(db: Db): Promise<string[]> {
  return (await db.prisma.runtime.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((r) => r.name);
}

export type KeyLookup =
  { status: "valid"; runtime: { id: string; name: string } } | { status: "revoked" } | { status: "unknown" };

// Not kept in memory: every request reads its key's row, so a key revoked anywhere (another instance, the
// CLI) is refused everywhere from the next request. The same statement reads the settings version, which
// decides whether this request may use the copies of the catalog and policies kept in memory
// (lib/db/settings-version.ts, docs/decisions/040-settings-on-every-instance.md): one round trip for both,
// straight on the driver as a prepared statement, not through Prisma.
export async function lookupRuntimeKey(db: Db, key: string): Promise<KeyLookup> {
  const hash = hashToken(key);
  const rows = await db.driver.query<{
    id: string;
    runtime_id: string;
    runtime_name: string;
    revoked: boolean;
    stale: boolean;
    settings_version: string;
  }>(
    `SELECT k.id::text, k.runtime_id::text, r.name AS runtime_name, k.revoked_at IS NOT NULL AS revoked,
            (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale, ${SETTINGS_VERSION_SQL}
       FROM runtime_keys k JOIN runtimes r ON r.id = k.runtime_id WHERE k.hash = $1`,
    [hash],
    { prepareAs: "settle_runtime_key_settings" },
  );
  const row = rows[0];
  if (!row) return { status: "unknown" };
  noteSettingsVersion(row.settings_version);
  if (row.revoked) return { status: "revoked" };
  // Recorded at most once a minute, so a busy key does not write on every request.
  if (row.stale) await db.driver.query(`UPDATE runtime_keys SET last_used_at = now() WHERE id = $1::uuid`, [row.id]);
  return { status: "valid", runtime: { id: row.runtime_id, name: row.runtime_name } };
}
