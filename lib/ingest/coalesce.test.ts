import { describe, expect, it } from "vitest";
import type { SqlDriver } from "../db/driver";
import { coalesce } from "./coalesce";

const driver = () => ({}) as SqlDriver;

describe("coalescing concurrent writes of one runtime", () => {
  it("a lone call is written at once, alone", async () => {
    const d = driver();
    const writes: number[][] = [];
    await coalesce(d, "rt", [1, 2], async (items) => void writes.push(items));
    expect(writes).toEqual([[1, 2]]);
  });

  it("calls that arrive while a write is running go together in the next one; each resolves after its own", async () => {
    const d = driver();
    const writes: number[][] = [];
    let release: () => void = () => {};
    const first = coalesce(d, "rt", [1], (items) => {
      writes.push(items);
      return new Promise<void>((r) => (release = r));
    });
    const later = [coalesce(d, "rt", [2], async (items) => void writes.push(items)), coalesce(d, "rt", [3, 4], async (items) => void writes.push(items))];
    const other = coalesce(d, "other runtime", [9], async (items) => void writes.push(items));
    await other;
    expect(writes).toEqual([[1], [9]]);
    release();
    await Promise.all([first, ...later]);
    expect(writes).toEqual([[1], [9], [2, 3, 4]]);
  });

  it("a failed write fails every call it carried, and the lane goes on", async () => {
    const d = driver();
    let release: () => void = () => {};
    const first = coalesce(d, "rt", [1], () => new Promise<void>((r) => (release = r)));
    const a = coalesce(d, "rt", [2], () => Promise.reject(new Error("database down")));
    const b = coalesce(d, "rt", [3], () => Promise.reject(new Error("database down")));
    release();
    await first;
    await expect(a).rejects.toThrow("database down");
    await expect(b).rejects.toThrow("database down");
    await expect(coalesce(d, "rt", [4], async () => {})).resolves.toBeUndefined();
  });

  it("merges at most 500 items a write", async () => {
    const d = driver();
    const sizes: number[] = [];
    let release: () => void = () => {};
    const first = coalesce(d, "rt", [0], () => new Promise<void>((r) => (release = r)));
    const rest = Array.from({ length: 6 }, () => coalesce(d, "rt", Array.from({ length: 100 }, () => 1), async (items) => void sizes.push(items.length)));
    release();
    await Promise.all([first, ...rest]);
    expect(sizes).toEqual([500, 100]);
  });
});
