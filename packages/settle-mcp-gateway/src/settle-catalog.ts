import { connectionBroke } from "@settle/client";
import { catalogEffectFor, type CatalogEntry } from "./effects.js";
import { effectClassSchema, type EffectClass } from "./config.js";

// Settle's tool catalog for the gateway's key (settle_catalog): the effect
// classes Settle's admins set for this runtime's tools, read from
// GET /api/v1/tool-catalog at start and every settle_catalog_refresh_s. When
// Settle cannot be read, the last catalog read stays in use (none at first:
// the tools rules, annotations and default_effect decide, as without it).

export type SettleCatalog = {
  effectFor: (tool: string) => EffectClass | null;
  /** Reads the catalog now: true when Settle answered it. */
  refresh: () => Promise<boolean>;
  /** Entries in use. */
  size: () => number;
  close: () => void;
};

export type SettleCatalogOptions = {
  url: string;
  key: string;
  refreshMs: number;
  timeoutMs: number;
  fetch?: typeof fetch;
  onError?: (message: string) => void;
};

function entriesOf(body: unknown): CatalogEntry[] | null {
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) return null;
  const entries: CatalogEntry[] = [];
  for (const item of items) {
    const pattern = (item as { pattern?: unknown } | null)?.pattern;
    const effect = effectClassSchema.safeParse((item as { effect_class?: unknown } | null)?.effect_class);
    if (typeof pattern === "string" && pattern !== "" && effect.success)
      entries.push({ pattern, effect_class: effect.data });
  }
  return entries;
}

export function createSettleCatalog(options: SettleCatalogOptions): SettleCatalog {
  const fetchFn = options.fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
  const onError = options.onError ?? (() => {});
  let entries: CatalogEntry[] = [];
  let timer: ReturnType<typeof setInterval> | null = null;

  async function refresh(): Promise<boolean> {
    try {
      const ask = () =>
        fetchFn(`${options.url.replace(/\/+$/, "")}/api/v1/tool-catalog`, {
          headers: { authorization: `Bearer ${options.key}`, accept: "application/json" },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      // A read changes nothing: one that lost its connection before any answer is sent again at once (as the client does).
      const res = await ask().catch((error: unknown) => {
        if (connectionBroke(error)) return ask();
        throw error;
      });
      const body: unknown = await res.json().catch(() => null);
      const read = res.ok ? entriesOf(body) : null;
      if (!read) {
        const code = (body as { code?: unknown } | null)?.code;
        onError(
          `Settle's tool catalog could not be read (HTTP ${res.status}${typeof code === "string" ? ` ${code}` : ""}); keeping the ${entries.length} entries read before`,
        );
        return false;
      }
      entries = read;
      return true;
    } catch (error) {
      onError(
        `Settle's tool catalog could not be read (${error instanceof Error ? error.message : String(error)}); keeping the ${entries.length} entries read before`,
      );
      return false;
    }
  }

  timer = setInterval(() => void refresh(), options.refreshMs);
  timer.unref();

  return {
    effectFor: (tool) => catalogEffectFor(entries, tool),
    refresh,
    size: () => entries.length,
    close: () => {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
