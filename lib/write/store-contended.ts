import "server-only";
import type { Db } from "../db/client";
import { isRetryableConflict } from "../db/errors";
import { forgetRows, knownRows, rememberRows } from "./known-rows";
import type { PreparedRecord } from "./prepared-record";
import { storeRecords, type Stored } from "./store-records";

// The contended retry (decision 012): a batch folded onto known rows first, then onto rows read
// fresh, then under the invocations' locks, each try checked by the one statement.

/** Settings of the transaction a contended batch falls back to (as the write connections have, lib/db/driver.ts). */
const LOCKED_SETTINGS = ["statement_timeout = '30s'", "enable_seqscan = off"];

/**
 * Stores a batch in as few round trips as it can: folded onto the rows this
 * process wrote last (one round trip), else onto rows read first (two). When
 * concurrent writers keep changing the same invocations it retries, then
 * holds the invocations' locks from the read on, in a transaction.
 */
export async function storeContended(db: Db, runtimeId: string, records: PreparedRecord[]): Promise<Stored> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const stored =
        attempt === 1
          ? await storeRecords(db.driver.write, runtimeId, records, { known: knownRows(db.driver, runtimeId) })
          : attempt <= 3
            ? await storeRecords(db.driver.write, runtimeId, records)
            : await db.driver.transaction((tx) => storeRecords(tx, runtimeId, records, { lock: true }), {
                settings: LOCKED_SETTINGS,
              });
      rememberRows(db.driver, runtimeId, stored.rows);
      return stored;
    } catch (error) {
      if (!isRetryableConflict(error) || attempt >= 6) throw error;
      forgetRows(
        db.driver,
        runtimeId,
        records.map((p) => p.invocationId),
      );
      // The first try folded onto what this process remembered: read, and try again at once.
      if (attempt > 1) await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
    }
  }
}
