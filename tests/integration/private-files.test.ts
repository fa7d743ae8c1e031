import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PGlite } from "@electric-sql/pglite";
import { closeDb } from "@/lib/db/client";
import { createPgliteDriver } from "@/lib/db/driver";
import { setEnv } from "@/lib/env";
import { authSecret } from "@/lib/identity/secret";
import { writeArchive } from "@/lib/retention/archive";
import { settingsProblem } from "@/lib/server-start";
import { runCli } from "@/cli/main";

// What another account on the same machine can read of Settle's (issue 36): the embedded database's folders
// were 0755 and 968 of PGlite's 1,232 files 0666, the write-ahead log with the admin's password hash included.
// Settle's folders are 0700 and its files 0600, an older installation is tightened when opened, one that
// cannot be made private stops Settle with one line, and exports and archives are written 0600 in 0700 folders.

/** Every path under `root` (itself included) whose mode lets group or others in. */
function openToOthers(root: string): string[] {
  const open: string[] = [];
  const visit = (p: string) => {
    const stat = lstatSync(p);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) open.push(`${p} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(p)) visit(path.join(p, name));
  };
  visit(root);
  return open;
}

const countFiles = (root: string): number =>
  readdirSync(root, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;

describe("Settle's files on this machine are its user's alone", () => {
  const base = mkdtempSync(path.join(tmpdir(), "settle-private-"));
  // The folders a default installation makes: `.settle/`, its data, archive and secret.
  const settle = path.join(base, "project", ".settle");
  afterEach(() => setEnv({ SETTLE_DATA_DIR: undefined, DATABASE_URL: undefined, SETTLE_ARCHIVE_DIR: undefined }));
  afterAll(async () => {
    await closeDb();
    rmSync(base, { recursive: true, force: true });
  });

  it("a new embedded database: .settle/ and the data directory 0700, every file 0600, the WAL included", async () => {
    const dataDir = path.join(settle, "data");
    const driver = await createPgliteDriver(dataDir, { share: true });
    await driver.exec("CREATE TABLE t (x text); INSERT INTO t VALUES ('hash')");
    await driver.close();
    expect(countFiles(dataDir)).toBeGreaterThan(500);
    expect(openToOthers(settle)).toEqual([]);
  });

  it("an older installation (0755 folders, 0666 files) is made private when Settle opens it", async () => {
    const dataDir = path.join(base, "old", ".settle", "data");
    mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    chmodSync(path.dirname(dataDir), 0o755);
    chmodSync(dataDir, 0o755);
    const old = await PGlite.create(dataDir);
    await old.close();
    expect(openToOthers(dataDir).length).toBeGreaterThan(500);
    const driver = await createPgliteDriver(dataDir);
    await driver.close();
    expect(openToOthers(path.dirname(dataDir))).toEqual([]);
  });

  it("refuses to start, in one line, when the data directory cannot be made private", () => {
    const dataDir = path.join(base, "foreign", "data");
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o755);
    // Another account's folder (this test runs as root, which may hand it over).
    chownSync(dataDir, 65534, 65534);
    setEnv({ DATABASE_URL: undefined, SETTLE_DATA_DIR: dataDir });
    const problem = settingsProblem();
    expect(problem).toMatch(new RegExp(`${dataDir}.*another user`));
    expect(problem).not.toContain("\n");
  });

  it("the session secret's folder, archives and their manifest: 0600 files in 0700 folders", async () => {
    const dataDir = path.join(base, "fresh", ".settle", "data");
    setEnv({ DATABASE_URL: undefined, SETTLE_DATA_DIR: dataDir });
    authSecret();
    expect(openToOthers(path.dirname(dataDir))).toEqual([]);

    const archiveDir = path.join(base, "fresh", ".settle", "archive");
    mkdirSync(archiveDir, { recursive: true, mode: 0o755 });
    chmodSync(archiveDir, 0o755);
    writeFileSync(path.join(archiveDir, "older.jsonl.gz"), "", { mode: 0o644 });
    chmodSync(path.join(archiveDir, "older.jsonl.gz"), 0o644);
    async function* pages() {
      yield ['{"id":1,"password":"scrypt$hash"}'];
    }
    await writeArchive(
      archiveDir,
      "attempts_p2026_01.jsonl.gz",
      {
        table: "attempts",
        source: "attempts_p2026_01",
        shelf: "2026-01-01",
        archived_at: "2026-12-07T00:00:00Z",
        migration: null,
      },
      pages(),
    );
    expect(openToOthers(archiveDir)).toEqual([]);
  });

  it("settle export writes its file 0600, in a 0700 folder when it makes one", async () => {
    const dataDir = path.join(base, "export", ".settle", "data");
    setEnv({ DATABASE_URL: undefined, SETTLE_DATA_DIR: dataDir });
    const file = path.join(base, "export", "backups", "nightly", "settle.jsonl.gz");
    const out: string[] = [];
    const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => out.push(s) } };
    expect(await runCli(["migrate"], io), out.join("")).toBe(0);
    const code = await runCli(["export", file], io);
    expect(code, out.join("")).toBe(0);
    expect(openToOthers(path.join(base, "export", "backups"))).toEqual([]);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
  });
});
