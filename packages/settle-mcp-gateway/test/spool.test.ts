import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SettleRecord } from "@settle/client";
import { openSpool } from "../src/spool.js";

// Nothing Settle could not take is lost: it waits on disk, is sent in order
// once Settle answers, stays when Settle still does not, and a file is
// drained by one spool only.

const record = (n: number): SettleRecord => ({
  event_id: `e-${n}`,
  task_id: "t",
  invocation_id: "i",
  tool: "create_order",
  phase: "outcome",
});
const dir = () => mkdtempSync(path.join(tmpdir(), "settle-mcp-spool-"));

describe("the spool", () => {
  it("sends what waits, in order, and leaves nothing behind", async () => {
    const spool = openSpool(dir());
    spool.add([record(1), record(2)]);
    spool.add([record(3)]);
    expect(spool.pending()).toBe(3);
    const sent: string[] = [];
    expect(await spool.drain(async (rs) => void sent.push(...rs.map((r) => r.event_id!)))).toEqual({
      sent: 3,
      left: 0,
    });
    expect(sent).toEqual(["e-1", "e-2", "e-3"]);
    expect(readdirSync(spool.dir)).toEqual([]);
  });

  it("keeps every record when Settle still does not take them, and sends them the next time", async () => {
    const spool = openSpool(dir());
    spool.add([record(1), record(2)]);
    expect(await spool.drain(async () => Promise.reject(new Error("unreachable")))).toEqual({ sent: 0, left: 2 });
    spool.add([record(3)]);
    const sent: string[] = [];
    await spool.drain(async (rs) => void sent.push(...rs.map((r) => r.event_id!)));
    expect(sent.sort()).toEqual(["e-1", "e-2", "e-3"]);
  });

  it("two drains at once send each record once", async () => {
    const shared = dir();
    const spool = openSpool(shared);
    spool.add(Array.from({ length: 450 }, (_, i) => record(i)));
    const sent: string[] = [];
    const send = async (rs: SettleRecord[]) => {
      await new Promise((r) => setTimeout(r, 5));
      sent.push(...rs.map((r) => r.event_id!));
    };
    await Promise.all([spool.drain(send), spool.drain(send), openSpool(shared).drain(send)]);
    expect(sent).toHaveLength(450);
    expect(new Set(sent).size).toBe(450);
  });
});
