import { AsyncLocalStorage } from "node:async_hooks";
import type { Sql } from "./driver";
import { processWide } from "../process-wide";

// Settings an instance keeps in memory (the tool catalog, policies) are in force on every instance from
// the next request after a write commits, wherever it was written: another instance, the CLI, plain SQL
// (docs/decisions/040-settings-on-every-instance.md). PostgreSQL keeps one counter, `settings_version`,
// that a trigger bumps in the transaction of every such write. A request reads it once — a runtime key's
// lookup reads it in the same statement, so the hot routes pay no extra round trip — and a copy kept in
// memory serves that request only if it was loaded under that version or a later one. Outside a request
// that has read the version (a page, a job, the CLI, a test calling lib/ directly) nothing kept is used:
// the setting is read from the database.

/** The version in a SELECT list: a runtime key's lookup reads it with the key. */
export const SETTINGS_VERSION_SQL = "(SELECT version FROM settings_version WHERE id)::text AS settings_version";

type Scope = { version: bigint | null };
// Process-wide: the fast lane and Next.js's bundles each have their copy of this module, and a request
// that one bundle scopes may be served by the other's handlers.
const scopes = processWide("settingsScopes", () => new AsyncLocalStorage<Scope>());

/** Runs `fn` as one request: the settings version it reads (noteSettingsVersion) decides which kept copies it may use. */
export function inSettingsScope<T>(fn: () => Promise<T>): Promise<T> {
  return scopes.run({ version: null }, fn);
}

/** What the current request read of the settings version (from a key lookup's row: text, as bigint travels). */
export function noteSettingsVersion(version: string | number | bigint | null | undefined): void {
  const scope = scopes.getStore();
  if (!scope || version === null || version === undefined) return;
  const read = BigInt(version);
  if (scope.version === null || read > scope.version) scope.version = read;
}

/** Reads the settings version for the current request (one round trip), for a request no runtime key's lookup read it in. */
export async function readSettingsVersion(sql: Sql): Promise<void> {
  const [row] = await sql.query<{ settings_version: string }>(`SELECT ${SETTINGS_VERSION_SQL}`);
  noteSettingsVersion(row?.settings_version);
}

export type KeptSetting<K, V> = {
  /** The kept copy of `key` if it is at least as new as the current request's settings version, else `load()` (then kept). */
  get: (key: K, load: () => Promise<V>) => Promise<V>;
};

type Copy<V> = { version: bigint; value: V };

/**
 * A setting kept in memory, per key, under the settings version it was loaded after. A key that is an object
 * (a database handle) is held weakly; of other keys at most `limit`: past it the copies are dropped, and loaded
 * again as asked.
 */
export function keptSetting<K, V>(name: string, limit = 1_000): KeptSetting<K, V> {
  const kept = processWide(name, () => ({ strong: new Map<K, Copy<V>>(), weak: new WeakMap<object, Copy<V>>() }));
  const read = (key: K) => (typeof key === "object" && key !== null ? kept.weak.get(key) : kept.strong.get(key));
  const keep = (key: K, copy: Copy<V>) => {
    if (typeof key === "object" && key !== null) return void kept.weak.set(key, copy);
    if (kept.strong.size >= limit) kept.strong.clear();
    kept.strong.set(key, copy);
  };
  return {
    async get(key, load) {
      const version = scopes.getStore()?.version ?? null;
      if (version === null) return load();
      const copy = read(key);
      if (copy && copy.version >= version) return copy.value;
      // Loaded after the version was read: it holds every write up to that version (and perhaps later ones).
      const value = await load();
      const newest = read(key);
      if (!newest || newest.version < version) keep(key, { version, value });
      return value;
    },
  };
}
