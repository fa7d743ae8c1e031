import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/lib/db/client";
import { createPgliteDriver, createPostgresDriver, type SqlDriver } from "@/lib/db/driver";
import { setEnv } from "@/lib/env";
import { call, createDatabase, createOperator, openSettle, type TestContext, runSettleCli } from "./harness";
import { ingest, invocationActions, queue } from "./routes";

// settle export / settle import: a consistent dump of every table, restored
// into an empty database — PostgreSQL, or the embedded one (which is how an
// embedded installation is backed up, and moved to PostgreSQL).

const settle = runSettleCli;

async function tableCounts(driver: SqlDriver): Promise<Record<string, number>> {
  const tables = await driver.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`);
    counts[name] = row!.n;
  }
  return counts;
}

describe("settle export and settle import", () => {
  let t: TestContext;
  let sourceUrl: string;
  const dir = mkdtempSync(path.join(tmpdir(), "settle-dump-"));
  const drops: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    t = await openSettle("postgres");
    sourceUrl = process.env.DATABASE_URL!;
    const records = [
      {
        task_id: "d-1",
        invocation_id: "d-1",
        tool: "charge_card",
        effect_class: "money",
        envelope: { outcome: "unknown" },
      },
      { task_id: "d-2", invocation_id: "d-2", tool: "send_email", effect_class: "send", envelope: { ok: true } },
      ...Array.from({ length: 30 }, (_, i) => ({
        task_id: `bulk-${i}`,
        invocation_id: `bulk-${i}`,
        tool: "create_order",
        effect_class: "create",
        arguments: { cart: `cart-${i}`, card_token: "tok_secret" },
        envelope: { ok: true, commit_state: "committed" },
      })),
    ];
    expect((await call(ingest, { key: t.key, body: { records } })).status).toBe(207);
    const { token } = await createOperator(t.db, "operator");
    const [{ version } = { version: 0 }] = await t.db.driver.query<{ version: number }>(
      "SELECT version FROM invocations WHERE invocation_id = 'd-1'",
    );
    const escalated = await call(invocationActions, {
      key: token,
      params: { invocation_id: "d-1" },
      body: { action: "escalate", note: "card network down", version },
    });
    expect(escalated.status).toBe(200);
  });
  afterAll(async () => {
    await t?.teardown();
    for (const drop of drops) await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exports every table as of one moment, restores it into an empty PostgreSQL, and the copy works", async () => {
    const file = path.join(dir, "backup.jsonl.gz");
    const exported = await settle(["export", file]);
    expect(exported.stderr).toMatch(/^Exported \d+ rows of \d+ tables from PostgreSQL/);
    expect(exported).toMatchObject({ code: 0, stdout: `${file}\n` });
    const lines = gunzipSync(readFileSync(file)).toString("utf8").trim().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({ format: "settle-dump/1" });

    const target = await createDatabase();
    drops.push(target.drop);
    await closeDb();
    setEnv({ DATABASE_URL: target.url });
    const imported = await settle(["import", file]);
    expect(imported.stderr).toBe("");
    expect(imported).toMatchObject({ code: 0 });
    const source = createPostgresDriver(sourceUrl, 1);
    const copy = createPostgresDriver(target.url, 1);
    try {
      expect(await tableCounts(copy)).toEqual(await tableCounts(source));
      // The copy is Settle, not just rows: the queue (with its search index) reads it, with the escalation.
      const { token } = await createOperator(await getDb(), "operator");
      const q = await call(queue, { key: token, path: "/api/v1/queue?q=d-1" });
      expect(q.body.items).toMatchObject([{ invocation_id: "d-1", status: "escalated" }]);

      // Into a database that already holds data: refused, nothing changed.
      const again = await settle(["import", file]);
      expect(again.code).toBe(1);
      expect(again.stderr.trim().split("\n")).toHaveLength(1);
      expect(again.stderr).toMatch(/already holds data/);
    } finally {
      await source.close();
      await copy.close();
      await closeDb();
      setEnv({ DATABASE_URL: sourceUrl });
    }
  });

  // The embedded database is made and migrated here: a minute is not enough on a loaded machine.
  it("moves a PostgreSQL installation into the embedded database, and back out of it", async () => {
    const file = path.join(dir, "move.jsonl");
    expect((await settle(["export", file])).code).toBe(0);
    await closeDb();
    const embedded = path.join(dir, "embedded");
    setEnv({ DATABASE_URL: undefined, SETTLE_DATA_DIR: embedded });
    try {
      const imported = await settle(["import", file]);
      expect(imported).toMatchObject({ code: 0 });
      expect(imported.stdout).toMatch(/into the embedded database/);
      const roundTrip = path.join(dir, "round-trip.jsonl");
      expect((await settle(["export", roundTrip])).code).toBe(0);
      const body = (f: string) => readFileSync(f, "utf8").split("\n").slice(1).join("\n");
      expect(body(roundTrip)).toBe(body(file));
      const pglite = await createPgliteDriver(embedded);
      const [row] = await pglite.query<{ n: number }>("SELECT count(*)::int AS n FROM invocations");
      await pglite.close();
      expect(row!.n).toBe(32);
    } finally {
      setEnv({ DATABASE_URL: sourceUrl, SETTLE_DATA_DIR: undefined });
    }
  }, 240_000);
});
