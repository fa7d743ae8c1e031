import "server-only";
import type { Db } from "../db/client";

// Where people reach the servers that run on this database. A server notes its address (SETTLE_PUBLIC_URL, else
// http://localhost:PORT) at start-up; the CLI, which runs beside it with neither setting in its own shell, builds
// its links (a password reset) on the address the server noted, not on a port it guesses.

/** Addresses not noted for this long are forgotten when another is noted. */
const FORGET_AFTER_DAYS = 90;

export async function noteServerAddress(db: Db, address: string, now: Date = new Date()): Promise<void> {
  await db.driver.query(
    `WITH forgotten AS (DELETE FROM server_addresses WHERE seen_at < $2::timestamptz - make_interval(days => $3))
     INSERT INTO server_addresses (address, seen_at) VALUES ($1, $2::timestamptz)
     ON CONFLICT (address) DO UPDATE SET seen_at = excluded.seen_at`,
    [address, now.toISOString(), FORGET_AFTER_DAYS],
  );
}

/** The address of the server that started last on this database, with when; null when none has noted one. */
export async function latestServerAddress(db: Db): Promise<{ address: string; seenAt: string } | null> {
  const [row] = await db.driver.query<{ address: string; seen_at: string }>(
    `SELECT address, seen_at FROM server_addresses ORDER BY seen_at DESC LIMIT 1`,
  );
  return row ? { address: row.address, seenAt: row.seen_at } : null;
}
