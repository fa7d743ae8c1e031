import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPgliteDriver, type SqlDriver } from "@/lib/db/driver";
import { embeddedConnection, embeddedIsServed, embeddedSocketFile } from "@/lib/db/embedded-socket";

// The embedded database served on its socket: PGlite is one session, so a
// client's transaction and this process's own statements must take turns,
// never mix (a client's ROLLBACK must not take this process's write with it).

describe("the embedded database's socket", () => {
  const dir = mkdtempSync(join(tmpdir(), "settle-socket-"));
  const dataDir = join(dir, "data");
  let driver: SqlDriver;
  beforeAll(async () => {
    driver = await createPgliteDriver(dataDir, { share: true });
    await driver.exec("CREATE TABLE marks (name text PRIMARY KEY)");
  });
  afterAll(async () => {
    await driver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps this process's statements out of a client's transaction, and the client's out of this process's", async () => {
    expect(embeddedIsServed(dataDir)).toBe(true);
    const client = new pg.Client(embeddedConnection(dataDir));
    await client.connect();
    await client.query("BEGIN");
    await client.query("INSERT INTO marks VALUES ('client')");
    // Started while the client's transaction is open: it must wait for it, not join it.
    const own = driver.query("INSERT INTO marks VALUES ('server') RETURNING name");
    await new Promise((r) => setTimeout(r, 100));
    await client.query("ROLLBACK");
    expect(await own).toEqual([{ name: "server" }]);
    expect(await driver.query("SELECT name FROM marks ORDER BY name")).toEqual([{ name: "server" }]);

    // And the other way round: a transaction here holds the client's statement until it ends.
    const inside = driver.transaction(async (tx) => {
      await tx.query("INSERT INTO marks VALUES ('tx')");
      await new Promise((r) => setTimeout(r, 100));
      throw new Error("roll back");
    });
    await new Promise((r) => setTimeout(r, 20));
    const fromClient = client.query("INSERT INTO marks VALUES ('client-2')");
    await expect(inside).rejects.toThrow("roll back");
    await fromClient;
    const { rows } = await client.query("SELECT name FROM marks ORDER BY name");
    expect(rows).toEqual([{ name: "client-2" }, { name: "server" }]);
    await client.end();
  });

  it("a client that said goodbye but has not closed its socket yet (a paused process) holds nobody up", async () => {
    const leaving = new pg.Client(embeddedConnection(dataDir));
    await leaving.connect();
    await leaving.query("SELECT 1");
    // Terminate, as pg's end() sends it, with the socket left open.
    const stream = (leaving as unknown as { connection: { stream: NodeJS.WritableStream } }).connection.stream;
    stream.write(Buffer.from([0x58, 0, 0, 0, 4]));
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    expect(await driver.query("SELECT count(*)::int AS n FROM marks")).toEqual([{ n: 2 }]);
    const next = new pg.Client(embeddedConnection(dataDir));
    await next.connect();
    expect((await next.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    expect(Date.now() - started).toBeLessThan(5_000);
    await next.end();
    leaving.end().catch(() => {});
  }, 30_000);

  it("stops serving when the database closes, and a killed server's stale socket does not stop the next one", async () => {
    await driver.close();
    expect(embeddedIsServed(dataDir)).toBe(false);
    writeFileSync(embeddedSocketFile(dataDir), ""); // what a kill -9 leaves behind
    driver = await createPgliteDriver(dataDir, { share: true });
    const client = new pg.Client(embeddedConnection(dataDir));
    await client.connect();
    expect((await client.query("SELECT count(*)::int AS n FROM marks")).rows).toEqual([{ n: 2 }]);
    await client.end();
  });
});
