import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SettleRecord } from "@settle/client";
import { openSpool } from "../src/spool.js";

// The spool holds calls' arguments and results before Settle redacts them:
// only its owner may read it, and a directory someone else owns is refused.
// A record Settle refuses for good goes to the dead-letter file and does not
// hold up the records behind it.

const record = (n: number): SettleRecord => ({
  event_id: `e-${n}`,
  task_id: "t",
  invocation_id: "i",
  tool: "create_order",
  phase: "outcome",
});
const mode = (p: string) => statSync(p).mode & 0o777;

describe("the spool's safety", () => {
  it("makes its directory 0700 and its files 0600, also a directory that was world-readable", () => {
    const parent = mkdtempSync(path.join(tmpdir(), "settle-mcp-spool-"));
    const fresh = path.join(parent, "a", "spool");
    const spool = openSpool(fresh);
    spool.add([record(1)]);
    spool.deadLetter([record(2)], "HTTP 413");
    expect(mode(fresh)).toBe(0o700);
    for (const name of readdirSync(fresh)) expect(mode(path.join(fresh, name))).toBe(0o600);

    const loose = path.join(parent, "loose");
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755);
    writeFileSync(path.join(loose, "spool-1-1.jsonl"), JSON.stringify(record(3)) + "\n", { mode: 0o644 });
    chmodSync(path.join(loose, "spool-1-1.jsonl"), 0o644);
    openSpool(loose);
    expect(mode(loose)).toBe(0o700);
    expect(mode(path.join(loose, "spool-1-1.jsonl"))).toBe(0o600);
  });

  it("refuses a directory another user owns", () => {
    const uid = process.getuid!();
    let foreign = "/";
    if (uid === 0) {
      foreign = mkdtempSync(path.join(tmpdir(), "settle-mcp-foreign-"));
      chownSync(foreign, 65534, 65534);
    }
    expect(() => openSpool(foreign)).toThrow(/belongs to another user/);
  });

  it("dead-letters what Settle refused for good, with the reason, and sends the records behind it", async () => {
    const spool = openSpool(mkdtempSync(path.join(tmpdir(), "settle-mcp-spool-")));
    spool.add([record(1), record(2), record(3)]);
    const sent: string[] = [];
    await spool.drain(async (rs) => {
      for (const r of rs) {
        if (r.event_id === "e-1") spool.deadLetter([r], "HTTP 413 PAYLOAD_TOO_LARGE");
        else sent.push(r.event_id!);
      }
    });
    expect(sent).toEqual(["e-2", "e-3"]);
    expect(spool.deadLettered()).toBe(1);
    const dead = readFileSync(spool.deadLetterFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(dead).toEqual([expect.objectContaining({ reason: "HTTP 413 PAYLOAD_TOO_LARGE", record: record(1) })]);
    expect(await spool.drain(async () => Promise.reject(new Error("never called")))).toEqual({ sent: 0, left: 0 });
  });
  it("sets aside a line cut short by a crash mid-write, and sends the records around it", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "settle-mcp-spool-"));
    const spool0 = path.join(dir, "spool");
    mkdirSync(spool0, { mode: 0o700 });
    writeFileSync(
      path.join(spool0, "spool-999999-1.jsonl"),
      `${JSON.stringify(record(1))}\n{"event_id":"e-2","ta\n${JSON.stringify(record(3))}\n`,
      { mode: 0o600 },
    );
    const said: string[] = [];
    const spool = openSpool(spool0, (m) => said.push(m));
    const sent: string[] = [];
    await spool.drain(async (records) => void sent.push(...records.map((r) => r.event_id!)));
    expect(sent).toEqual(["e-1", "e-3"]);
    expect(spool.pending()).toBe(0);
    const dead = readFileSync(spool.deadLetterFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(dead).toHaveLength(1);
    expect(dead[0].line).toBe('{"event_id":"e-2","ta');
    expect(said).toEqual([expect.stringContaining("spool-999999-1.jsonl")]);
  });
});
