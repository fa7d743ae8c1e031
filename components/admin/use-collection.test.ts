import { MutationObserver, QueryClient, QueryObserver } from "@tanstack/react-query";
import { afterEach, describe, expect, it } from "vitest";
import { refreshingAfter } from "./use-collection";

// What a collection's mutation does besides its own work: the collection is
// read again once it settles, made or refused, and only that collection.

const key = ["admin", "users"] as const;
const other = ["admin", "runtime-keys"] as const;

function setUp() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  const reads = { list: 0, other: 0 };
  // Counts reads that have come back, each a few milliseconds after it was asked for.
  const read = async (count: () => void) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    count();
    return { items: [] };
  };
  const watch = (queryKey: readonly string[], count: () => void) =>
    new QueryObserver(client, { queryKey, queryFn: () => read(count), initialData: { items: [] } }).subscribe(() => {});
  const stops = [watch(key, () => (reads.list += 1)), watch(other, () => (reads.other += 1))];
  return { client, reads, stop: () => stops.forEach((s) => s()) };
}

let stop = () => {};
afterEach(() => {
  stop();
  stop = () => {};
});

describe("refreshingAfter", () => {
  it("reads the collection again after a change is made, after the caller's own onSuccess and onSettled", async () => {
    const t = setUp();
    stop = t.stop;
    const order: string[] = [];
    const mutation = new MutationObserver(
      t.client,
      refreshingAfter(t.client, key, {
        mutationFn: async (name: string) => ({ name }),
        onSuccess: () => void order.push(`success:${t.reads.list}`),
        onSettled: () => void order.push(`settled:${t.reads.list}`),
      }),
    );
    await expect(mutation.mutate("ana")).resolves.toEqual({ name: "ana" });
    expect(order).toEqual(["success:0", "settled:0"]);
    expect(t.reads).toEqual({ list: 1, other: 0 });
  });

  it("stays pending until the collection has been read again", async () => {
    const t = setUp();
    stop = t.stop;
    const mutation = new MutationObserver(t.client, refreshingAfter(t.client, key, { mutationFn: async () => "done" }));
    const states: Array<[string, number]> = [];
    mutation.subscribe((r) => states.push([r.status, t.reads.list]));
    await mutation.mutate(undefined);
    expect(states.at(-1)).toEqual(["success", 1]);
    expect(states.filter(([status]) => status === "success")).toEqual([["success", 1]]);
  });

  it("reads the collection again when the change is refused, and the caller still gets the error", async () => {
    const t = setUp();
    stop = t.stop;
    const refused = new Error("ana@example.com already has an account.");
    let seen: unknown = null;
    const mutation = new MutationObserver(
      t.client,
      refreshingAfter(t.client, key, {
        mutationFn: async () => {
          throw refused;
        },
        onError: (error) => void (seen = error),
      }),
    );
    await expect(mutation.mutate(undefined)).rejects.toBe(refused);
    expect(seen).toBe(refused);
    expect(mutation.getCurrentResult().error).toBe(refused);
    expect(t.reads).toEqual({ list: 1, other: 0 });
  });

  it("refreshes every query under a key prefix", async () => {
    const t = setUp();
    stop = t.stop;
    const mutation = new MutationObserver(
      t.client,
      refreshingAfter(t.client, ["admin"], { mutationFn: async () => null }),
    );
    await mutation.mutate(undefined);
    expect(t.reads).toEqual({ list: 1, other: 1 });
  });
});
