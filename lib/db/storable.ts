import { isoOfMs } from "../outcome/time";

// What a value must be for both JavaScript and PostgreSQL to hold it. A time
// is stored as timestamptz and written as ISO 8601 with a four-digit year, so
// it lies in years 1 to 9999; counts are PostgreSQL integers (int4).

export const MIN_TIME_MS = Date.parse("0001-01-01T00:00:00.000Z");
export const MAX_TIME_MS = Date.parse("9999-12-31T23:59:59.999Z");
export const MAX_INT4 = 2_147_483_647;

/** The ISO string of a time Settle can store, or null. */
export function storableIso(ms: number): string | null {
  return Number.isFinite(ms) && ms >= MIN_TIME_MS && ms <= MAX_TIME_MS ? isoOfMs(ms) : null;
}

/** A whole number PostgreSQL's integer holds, at least `min`. */
export function storableCount(value: unknown, min = 0): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= MAX_INT4;
}
