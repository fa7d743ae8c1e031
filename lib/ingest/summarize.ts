import "server-only";
import type { CatalogOnce } from "../catalog/load";
import { entryFor } from "../catalog/effect-class";
import { summarize } from "../catalog/templates";
import type { PreparedRecord } from "../write/prepared-record";

/**
 * Each record with arguments gets its one-line summary just before it is stored, on every path (native ingest,
 * the gateway, OTLP, the guard), from its tool's catalog entry and the arguments as stored (secrets redacted):
 * once per record, kept with it and on its invocation, never worked out again per page view.
 */
export async function summarizeCalls(records: readonly PreparedRecord[], catalogOf: CatalogOnce): Promise<void> {
  const withArguments = records.filter((p) => p.arguments !== null && p.arguments !== undefined);
  if (withArguments.length === 0) return;
  const catalog = await catalogOf();
  for (const record of withArguments) {
    record.summary = summarize(entryFor(catalog, record.tool)?.summary, {
      tool: record.tool,
      idempotencyKey: record.idempotencyKey,
      args: record.arguments,
    });
  }
}
