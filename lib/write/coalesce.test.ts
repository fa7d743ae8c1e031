import { describe, expect, it } from "vitest";
import type { SqlDriver } from "../db/driver";
import { coalesce, WRITES_IN_FLIGHT } from "./coalesce";

const driver = () => ({}) as SqlDriver;

describe("coalescing concurrent writes of one runtime", () => {
  it("a lone call is written at once, alone", async () => {
    const d = driver();
    const writes: number[][] = [];
    await coalesce(d, "rt", [1, 2], async (items) => void writes.push(items));
    expect(writes).toEqual([[1, 2]]);
  });

  /** Fills every slot of a lane with a write that waits until released. */
  function occupy(d: SqlDriver, writes: number[][]) {
    const releases: Array<() => void> = [];
    const held = Array.from({ length: WRITES_IN_FLIGHT }, (_, i) =>
      coalesce(d, "rt", [100 + i], (items) => {
        writes.push(items);
        return new Promise<void>((r) => releases.push(r));
      }),
    );
    return { held, release: () => releases.forEach((r) => r()) };
  }

  it(`up to ${WRITES_IN_FLIGHT} writes run at once; calls that arrive while all are busy go together in the next one`, async () => {
    const d = driver();
    const writes: number[][] = [];
    const { held, release } = occupy(d, writes);
    expect(writes).toHaveLength(WRITES_IN_FLIGHT);
    const later = [
      coalesce(d, "rt", [2], async (items) => void writes.push(items)),
      coalesce(d, "rt", [3, 4], async (items) => void writes.push(items)),
    ];
    const other = coalesce(d, "other runtime", [9], async (items) => void writes.push(items));
    await other;
    expect(writes.at(-1)).toEqual([9]);
    release();
    await Promise.all([...held, ...later]);
    expect(writes.at(-1)).toEqual([2, 3, 4]);
  });

  it("a failed write fails every call it carried, and the lane goes on", async () => {
    const d = driver();
    const { held, release } = occupy(d, []);
    const a = coalesce(d, "rt", [2], () => Promise.reject(new Error("database down")));
    const b = coalesce(d, "rt", [3], () => Promise.reject(new Error("database down")));
    release();
    await Promise.all(held);
    await expect(a).rejects.toThrow("database down");
    await expect(b).rejects.toThrow("database down");
    await expect(coalesce(d, "rt", [4], async () => {})).resolves.toBeUndefined();
  });

  it("merges at most 500 items a write", async () => {
    const d = driver();
    const sizes: number[] = [];
    const { held, release } = occupy(d, []);
    const rest = Array.from({ length: 6 }, () =>
      coalesce(
        d,
        "rt",
        Array.from({ length: 100 }, () => 1),
        async (items) => void sizes.push(items.length),
      ),
    );
    release();
    await Promise.all([...held, ...rest]);
    expect(sizes.sort((x, y) => y - x)).toEqual([500, 100]);
  });
});
