// Shelves: the months the append-only tables are partitioned by (decision 035). Pure, so the partition
// maker, retention, the archive and their tests share one rule for a month's bounds and a partition's name.
// The attempts migration (20261204140000_attempt_shelves) names its first partitions by the same rule.

/**
 * The tables partitioned by shelf: the retention period their rows follow (rules.ts), and their key within a
 * month (the order an archive is written in, and how a batch is deleted).
 */
export const shelvedTables = [
  {
    table: "attempts",
    period: "attempts_days",
    key: [
      ["runtime_id", "uuid"],
      ["event_key", "text"],
    ],
  },
  {
    table: "invocation_transitions",
    period: "audit_days",
    key: [
      ["runtime_id", "uuid"],
      ["id", "bigint"],
    ],
  },
  {
    table: "guard_checks",
    period: "audit_days",
    key: [
      ["runtime_id", "uuid"],
      ["id", "uuid"],
    ],
  },
] as const;
export type ShelvedTable = (typeof shelvedTables)[number]["table"];

/** A partitioned table's key within a month; throws for a name that is not one of them (an archive's header). */
export function shelfKeyOf(table: string) {
  const shelved = shelvedTables.find((t) => t.table === table);
  if (!shelved) throw new Error(`${table} is not a table Settle partitions by month`);
  return shelved.key;
}

/** The shelf of rows kept past their month (their invocation is not yet out of retention): `attempts_kept`. */
export const KEPT_SHELF = "infinity";

export const keptPartition = <T extends ShelvedTable>(table: T) => `${table}_kept` as const;

/** A month as its first day, `YYYY-MM-01` (UTC). */
export type Shelf = string;

const pad = (n: number) => String(n).padStart(2, "0");

/** The shelf of a moment: the first day of its UTC month. */
export function shelfOf(at: Date): Shelf {
  return `${at.getUTCFullYear()}-${pad(at.getUTCMonth() + 1)}-01`;
}

/** The shelf `months` after (or before, when negative) this one. */
export function addMonths(shelf: Shelf, months: number): Shelf {
  const index = Number(shelf.slice(0, 4)) * 12 + Number(shelf.slice(5, 7)) - 1 + months;
  return `${Math.floor(index / 12)}-${pad((index % 12) + 1)}-01`;
}

/** The moment a shelf ends (the first instant of the next month, UTC). */
export function shelfEnd(shelf: Shelf): Date {
  return new Date(`${addMonths(shelf, 1)}T00:00:00.000Z`);
}

/** `attempts_p2026_12`: the partition that holds a table's rows of one month. */
export function partitionName(table: ShelvedTable, shelf: Shelf): string {
  return `${table}_p${shelf.slice(0, 4)}_${shelf.slice(5, 7)}`;
}

export const defaultPartition = (table: ShelvedTable) => `${table}_default`;

/** The shelf a month partition's name stands for; null for any other name. */
export function shelfOfPartition(table: ShelvedTable, name: string): Shelf | null {
  const match = new RegExp(`^${table}_p(\\d{4})_(\\d{2})$`).exec(name);
  return match ? `${match[1]}-${match[2]}-01` : null;
}

/** The shelves from this moment's month through `ahead` months later: the partitions that must exist now. */
export function shelvesAhead(now: Date, ahead: number): Shelf[] {
  const first = shelfOf(now);
  return Array.from({ length: ahead + 1 }, (_, i) => addMonths(first, i));
}
