import "server-only";
import type { Db } from "../db/client";
import type { ToolCatalogEntry } from "./effect-class";

// The tool catalog of a runtime key, in the order its entries are matched.
// No catalog is stored yet, so every tool falls back to what its span says
// (lib/catalog/effect-class.ts); issue 14's catalog replaces this reader.

export async function loadToolCatalog(_db: Db, _runtimeKeyId: string): Promise<ToolCatalogEntry[]> {
  return [];
}
