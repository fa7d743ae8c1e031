import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { openEmbeddedDriver } from "@/lib/db/client";
import { createPgliteDriver, type SqlDriver } from "@/lib/db/driver";
import { embeddedConnection, embeddedSocketDir, embeddedSocketFile } from "@/lib/db/embedded-socket";

// The embedded database's socket (issue 36): with a long data path its folder is a predictable name in /tmp
// that another account could make first and stand in for the database to every `settle` command; and a client
// that held a transaction open on it froze the server with no limit.

const base = mkdtempSync(path.join(tmpdir(), "settle-claim-"));
/** A data directory deep enough that its socket goes to the temp folder. */
const deepDataDir = (name: string) => path.join(base, "x".repeat(60), name, "data");
const withTimeout = <T>(promise: Promise<T>, ms: number, what: string) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms)),
  ]);

describe("another account cannot stand in for the embedded database", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const done of cleanups.splice(0).reverse()) await done();
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  /** What another account left at the predictable name: its folder (0777, its uid) with a socket of its own. */
  async function squat(dataDir: string): Promise<{ server: Server; connections: () => number }> {
    const dir = embeddedSocketDir(dataDir);
    expect(dir.startsWith(tmpdir())).toBe(true);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { mode: 0o777 });
    chmodSync(dir, 0o777);
    let connections = 0;
    const server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(embeddedSocketFile(dataDir), resolve));
    chownSync(embeddedSocketFile(dataDir), 65534, 65534);
    chownSync(dir, 65534, 65534);
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    return { server, connections: () => connections };
  }

  /** The data directory held by another live process, as the server holds it while a command runs. */
  function heldElsewhere(dataDir: string): ChildProcess {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const holder = spawn("sleep", ["60"], { stdio: "ignore" });
    writeFileSync(`${dataDir}.lock`, String(holder.pid));
    cleanups.push(() => holder.kill());
    return holder;
  }

  it("a settle command refuses a socket folder another user made, and never connects to it", async () => {
    const dataDir = deepDataDir("squatted");
    const fake = await squat(dataDir);
    heldElsewhere(dataDir);
    const opened = openEmbeddedDriver(dataDir, { share: true, join: true }).then(async (driver) => {
      await driver.query("SELECT 1").finally(() => driver.close());
      return "connected";
    });
    await expect(opened).rejects.toThrow(/socket folder .* belongs to another user \(uid 65534\)/);
    expect(fake.connections()).toBe(0);
  });

  it("and a socket folder that is a link somewhere else", async () => {
    const dataDir = deepDataDir("linked");
    const elsewhere = path.join(base, "elsewhere");
    mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
    const dir = embeddedSocketDir(dataDir);
    rmSync(dir, { recursive: true, force: true });
    symlinkSync(elsewhere, dir);
    cleanups.push(() => rmSync(dir, { force: true }));
    writeFileSync(path.join(elsewhere, ".s.PGSQL.5432"), "");
    heldElsewhere(dataDir);
    await expect(openEmbeddedDriver(dataDir, { share: true, join: true })).rejects.toThrow(/is a symbolic link/);
  });

  it("the server does not serve in a folder it cannot claim, and says why", async () => {
    const dataDir = deepDataDir("server");
    const fake = await squat(dataDir);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const driver = await createPgliteDriver(dataDir, { share: true });
    cleanups.push(() => driver.close());
    expect(warn.mock.calls.flat().join(" ")).toMatch(/not served .*belongs to another user/);
    // The other account's socket is still theirs: Settle neither removed it nor listened in its place.
    const client = new pg.Client({ ...embeddedConnection(dataDir), connectionTimeoutMillis: 2_000 });
    await expect(client.connect()).rejects.toThrow();
    expect(fake.connections()).toBe(1);
  });

  it("claims its own folder in the temp folder: 0700, this user's, and serves there", async () => {
    const dataDir = deepDataDir("own");
    const driver = await createPgliteDriver(dataDir, { share: true });
    cleanups.push(() => driver.close());
    expect(existsSync(embeddedSocketFile(dataDir))).toBe(true);
    const { statSync } = await import("node:fs");
    expect(statSync(embeddedSocketDir(dataDir)).mode & 0o777).toBe(0o700);
    const client = new pg.Client(embeddedConnection(dataDir));
    await client.connect();
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await client.end();
  });
});

describe("a client idle in a transaction on the socket", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "settle-idle-"));
  let driver: SqlDriver;
  afterAll(async () => {
    await driver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is rolled back and dropped after the limit; the server's statements then run; others are left alone", async () => {
    const dataDir = path.join(dir, "data");
    driver = await createPgliteDriver(dataDir, { share: true, idleInTransactionMs: 400 });
    await driver.exec("CREATE TABLE marks (name text PRIMARY KEY)");

    const quiet = new pg.Client(embeddedConnection(dataDir));
    await quiet.connect();
    const idleOutside = new pg.Client(embeddedConnection(dataDir));
    await idleOutside.connect();
    await idleOutside.query("SELECT 1");
    const busy = new pg.Client(embeddedConnection(dataDir));
    await busy.connect();
    const errors: string[] = [];
    quiet.on("error", (e) => errors.push(e.message));

    await quiet.query("BEGIN");
    await quiet.query("INSERT INTO marks VALUES ('half-done')");
    const started = Date.now();
    // Held by the quiet client's transaction until the limit ends it: then it runs.
    await withTimeout(driver.query("INSERT INTO marks VALUES ('server')"), 5_000, "the server's statement");
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    await expect(quiet.query("COMMIT")).rejects.toThrow();
    expect(await driver.query("SELECT name FROM marks ORDER BY name")).toEqual([{ name: "server" }]);

    // A client in a transaction that keeps talking is not idle, however long the transaction.
    await busy.query("BEGIN");
    for (let i = 0; i < 8; i += 1) {
      await busy.query("INSERT INTO marks VALUES ($1)", [`busy-${i}`]);
      await new Promise((r) => setTimeout(r, 150));
    }
    await busy.query("COMMIT");
    // And one idle outside a transaction holds nobody up, so it stays.
    expect((await idleOutside.query("SELECT count(*)::int AS n FROM marks")).rows).toEqual([{ n: 9 }]);
    await Promise.all([busy.end(), idleOutside.end()]);
    quiet.end().catch(() => {});
  }, 30_000);
});
