import type { SqlDriver } from "../db/driver";
import { processWide } from "../process-wide";

// Natural batching of concurrent requests for one runtime: up to
// WRITES_IN_FLIGHT writes run side by side (the database works on several at
// once); while they are all on their way, the records of requests that arrive
// meanwhile wait and then go together, in one statement. A request that finds
// a free slot is written at once (no timer, no added wait); under load, one
// round trip and one statement carry many requests' records. Every request still answers only after its own records
// are committed, and its results stay its own (a record the database refuses
// is found by halving, whichever request brought it).

/** At most this many records go in one statement, as in one request. */
const MERGE_LIMIT = 500;
/** Writes of one runtime at once: enough to keep a few database cores busy, few enough to merge under load. */
export const WRITES_IN_FLIGHT = 3;

type Write<T> = (merged: T[]) => Promise<void>;
type Waiting<T> = { items: T[]; write: Write<T>; done: () => void; failed: (error: unknown) => void };
type Lane<T> = { running: number; waiting: Array<Waiting<T>> };

const lanes = processWide("ingestLanes", () => new WeakMap<SqlDriver, Map<string, Lane<unknown>>>());

function laneOf<T>(driver: SqlDriver, key: string): Lane<T> {
  let byKey = lanes.get(driver);
  if (!byKey) lanes.set(driver, (byKey = new Map()));
  let lane = byKey.get(key) as Lane<T> | undefined;
  if (!lane) byKey.set(key, (lane = { running: 0, waiting: [] }));
  return lane;
}

/**
 * Runs `write` for `items`, merged with the items of other calls for the same
 * key that arrive while a write for it is running: the first waiting call's
 * `write` gets them all (so calls with one key must write alike). Each call
 * resolves when the write that carried its items has.
 */
export function coalesce<T>(driver: SqlDriver, key: string, items: T[], write: Write<T>): Promise<void> {
  const lane = laneOf<T>(driver, key);
  return new Promise<void>((done, failed) => {
    lane.waiting.push({ items, write, done, failed });
    if (lane.running < WRITES_IN_FLIGHT) void drain(lane);
  });
}

/** One slot: writes what waits, merged, until nothing does. */
async function drain<T>(lane: Lane<T>): Promise<void> {
  lane.running += 1;
  while (lane.waiting.length > 0) {
    const batch: Array<Waiting<T>> = [];
    let size = 0;
    while (lane.waiting.length > 0 && (batch.length === 0 || size + lane.waiting[0]!.items.length <= MERGE_LIMIT)) {
      const next = lane.waiting.shift()!;
      batch.push(next);
      size += next.items.length;
    }
    try {
      await batch[0]!.write(batch.flatMap((w) => w.items));
      for (const w of batch) w.done();
    } catch (error) {
      for (const w of batch) w.failed(error);
    }
  }
  lane.running -= 1;
}
