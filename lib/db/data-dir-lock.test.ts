import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DataDirInUseError, lockDataDir } from "./data-dir-lock";

describe("embedded database lock", () => {
  const made: string[] = [];
  const dir = () => {
    const parent = mkdtempSync(path.join(tmpdir(), "settle-lock-"));
    made.push(parent);
    return path.join(parent, "data");
  };
  afterAll(() => {
    for (const parent of made) rmSync(parent, { recursive: true, force: true });
  });

  it("takes and releases the lock", () => {
    const d = dir();
    const release = lockDataDir(d);
    expect(readFileSync(`${d}.lock`, "utf8")).toBe(String(process.pid));
    release();
    expect(existsSync(`${d}.lock`)).toBe(false);
  });

  it("refuses while another live process holds it", async () => {
    const d = dir();
    const other = spawn("sleep", ["5"]);
    await new Promise((r) => other.once("spawn", r));
    writeFileSync(`${d}.lock`, String(other.pid));
    try {
      expect(() => lockDataDir(d)).toThrow(DataDirInUseError);
    } finally {
      other.kill();
    }
  });

  it("takes over a lock left by a process that is gone", async () => {
    const d = dir();
    const gone = spawn("true");
    await new Promise((r) => gone.once("exit", r));
    writeFileSync(`${d}.lock`, String(gone.pid));
    const release = lockDataDir(d);
    expect(readFileSync(`${d}.lock`, "utf8")).toBe(String(process.pid));
    release();
  });
});
