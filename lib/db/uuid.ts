import { randomFillSync } from "node:crypto";
import { processWide } from "../process-wide";

// Row ids that start with the time (UUID version 7, RFC 9562): new rows land
// at the right end of the primary key's index instead of on a random page.

// Random bits come from a pool filled 4 KiB at a time: one call into the
// system's generator per 256 ids, not one per id.
const random = processWide("uuidPool", () => ({ pool: Buffer.alloc(4096), used: 4096 }));

export function timeOrderedUuid(now = Date.now()): string {
  const { pool } = random;
  if (random.used + 16 > pool.length) {
    randomFillSync(pool);
    random.used = 0;
  }
  const b = Buffer.from(pool.subarray(random.used, random.used + 16));
  random.used += 16;
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
