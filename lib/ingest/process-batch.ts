import "server-only";
import type { Db } from "../db/client";
import { isDataError, sqlState } from "../db/errors";
import { noteWrites } from "../db/planner-stats";
import { countIngested } from "../observability/metrics";
import { coalesce } from "../write/coalesce";
import { storeContended } from "../write/store-contended";
import type { Stored } from "../write/store-records";
import { recordError } from "../errors";
import type { IngestResult, RecordResult } from "./result";
import { needsToolReading, prepareRecord, type RecordProblem, type ToolReading } from "./record";
import type { PreparedRecord } from "../write/prepared-record";
import { cleanText } from "../redact/redact";
import { flagPossibleDuplicates } from "../invocations/duplicates";
import { summarizeCalls } from "./summarize";
import { catalogOnce, toolReadingOf, type CatalogOnce } from "../catalog/load";

// Ingests a batch of records for one runtime: every accepted record is
// committed before the caller answers, a rejected one stores nothing, a
// repeated event changes nothing, and no record can take its neighbours down.
//
// Each record is validated and prepared on its own first; one that cannot be
// is rejected alone. The rest are stored in two round trips with bound
// parameters (decision 012): one reads the stored states, one statement
// writes the attempts and the states the fold makes of them, and checks that
// nothing it folded from changed meanwhile. Should PostgreSQL still refuse a
// value, the batch is split and stored in halves until only the record it
// refuses is left.

export type { IngestResult, RecordResult };

export type RuntimeRef = { id: string; name: string };

type Pending = { prepared: PreparedRecord; result: RecordResult };

/**
 * Records that came without the guard may repeat an effect under a new key
 * (lib/invocations/duplicates.ts). Looked for once they are committed, and
 * never at their expense: a failure here leaves them stored and unflagged.
 */
async function flagAfterTheFact(db: Db, runtimeId: string, stored: Stored): Promise<void> {
  if (stored.digested.length === 0) return;
  try {
    await flagPossibleDuplicates(db.driver, runtimeId, stored.digested);
  } catch (error) {
    console.error("[settle] possible duplicates could not be flagged:", error);
  }
}

/**
 * Stores records in one transaction; when PostgreSQL refuses a value (a data
 * error), in halves, until the one record it refuses is rejected alone.
 */
async function storeIsolated(db: Db, runtimeId: string, pending: Pending[]): Promise<void> {
  try {
    const stored = await storeContended(
      db,
      runtimeId,
      pending.map((p) => p.prepared),
    );
    noteWrites(db.driver, stored.inserted.size);
    // Stored before, or by a concurrent request in the meantime: either way a duplicate.
    for (const p of pending) if (!stored.inserted.has(p.prepared.eventKey)) p.result.status = "duplicate";
    await flagAfterTheFact(db, runtimeId, stored);
  } catch (error) {
    if (!isDataError(error)) throw error;
    if (pending.length === 1) {
      const [only] = pending;
      const state = sqlState(error);
      const reason = error instanceof Error ? error.message : "refused";
      Object.assign(only!.result, {
        status: "rejected",
        error: recordError(
          {
            code: "STORAGE_REFUSED",
            message: `The database refused a value of this record (SQLSTATE ${state}: ${reason}).`,
          },
          only!.result.event_id ?? `record ${only!.result.index}`,
        ),
      });
      return;
    }
    const half = Math.ceil(pending.length / 2);
    await storeIsolated(db, runtimeId, pending.slice(0, half));
    await storeIsolated(db, runtimeId, pending.slice(half));
  }
}

/**
 * Requests merged into one write may carry the same event: the first one is
 * stored, the others answer duplicate (as within one request).
 */
function once(merged: Pending[]): Pending[] {
  const seen = new Set<string>();
  return merged.filter((p) => {
    if (seen.has(p.prepared.eventKey)) {
      p.result.status = "duplicate";
      return false;
    }
    seen.add(p.prepared.eventKey);
    return true;
  });
}

function prepareSafely(
  record: unknown,
  receivedAt: Date,
  tools: ToolReading | undefined,
  longIntegers: boolean,
): PreparedRecord | RecordProblem {
  try {
    return prepareRecord(record, receivedAt, tools, longIntegers);
  } catch (error) {
    // Whatever went wrong reading one record is that record's problem only.
    console.error("[settle] a record could not be prepared:", error);
    return { code: "INVALID_RECORD", message: "Settle could not read this record." };
  }
}

/**
 * `catalog`: the runtime's tool catalog for this request (its effect classes, volatile arguments and summaries), read
 * once and only when a record needs it; one is made when not given. `longIntegers`: the records may hold BigInts
 * (read-body.ts).
 */
export type IngestOptions = { catalog?: CatalogOnce; longIntegers?: boolean };

/** `unparsable` holds NDJSON lines that were not JSON: each rejects its own record only. */
export async function ingestRecords(
  db: Db,
  runtime: RuntimeRef,
  raw: unknown[],
  receivedAt = new Date(),
  unparsable: Map<number, string> = new Map(),
  options: IngestOptions = {},
): Promise<IngestResult> {
  const catalog = options.catalog ?? catalogOnce(db, runtime.id);
  const tools = raw.some(needsToolReading) ? toolReadingOf(await catalog()) : undefined;
  return ingestPrepared(
    db,
    runtime,
    raw.map((record, index) => {
      const lineError = unparsable.get(index);
      const prepared = lineError
        ? {
            code: "INVALID_JSON",
            message: `record ${index + 1} of this request (a non-blank NDJSON line) is not valid JSON (${lineError}).`,
          }
        : prepareSafely(record, receivedAt, tools, options.longIntegers === true);
      const given = (record as { event_id?: unknown } | null)?.event_id;
      return { prepared, givenEventId: typeof given === "string" ? cleanText(given) : null };
    }),
    catalog,
  );
}

/** A record prepared by its reader (an ingest record, a span's attempt), or why it cannot be; with the event id it named. */
export type PreparedInput = { prepared: PreparedRecord | RecordProblem; givenEventId: string | null };

/**
 * Stores prepared records as ingestRecords does: one result per input, in order; a problem rejects its own record
 * only. `catalog`: the request's, for the calls' summaries (one is made when not given).
 */
export async function ingestPrepared(
  db: Db,
  runtime: RuntimeRef,
  inputs: PreparedInput[],
  catalog: CatalogOnce = catalogOnce(db, runtime.id),
): Promise<IngestResult> {
  const results: RecordResult[] = [];
  const pending: Pending[] = [];
  const seenInBatch = new Set<string>();
  inputs.forEach(({ prepared, givenEventId }, index) => {
    if ("code" in prepared) {
      results.push({
        index,
        status: "rejected",
        event_id: givenEventId,
        invocation_id: null,
        error: recordError(prepared, givenEventId ?? `record ${index}`),
      });
      return;
    }
    const duplicate = seenInBatch.has(prepared.eventKey);
    seenInBatch.add(prepared.eventKey);
    const result: RecordResult = {
      index,
      status: duplicate ? "duplicate" : "accepted",
      event_id: prepared.eventId ?? prepared.eventKey,
      invocation_id: prepared.invocationId,
      ...(prepared.normalized.ignored ? { ignored: prepared.normalized.ignored } : {}),
    };
    results.push(result);
    if (!duplicate) pending.push({ prepared, result });
  });

  await summarizeCalls(
    pending.map((p) => p.prepared),
    catalog,
  );
  if (pending.length > 0)
    await coalesce(db.driver, runtime.id, pending, (merged) => storeIsolated(db, runtime.id, once(merged)));

  const counts = {
    results,
    accepted: results.filter((r) => r.status === "accepted").length,
    duplicates: results.filter((r) => r.status === "duplicate").length,
    rejected: results.filter((r) => r.status === "rejected").length,
  };
  countIngested(counts);
  return counts;
}
