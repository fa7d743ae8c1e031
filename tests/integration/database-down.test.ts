import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/lib/db/client";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { setEnv } from "@/lib/env";
import { call, createDatabase } from "./harness";
import { getInvocation, health, ingest } from "./routes";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy";

describe("the database goes down and comes back", () => {
  let proxy: TcpProxy;
  let drop: () => Promise<void>;
  let key: string;

  beforeAll(async () => {
    const database = await createDatabase();
    drop = database.drop;
    proxy = await startTcpProxy();
    await closeDb();
    setEnv({
      DATABASE_URL: `postgresql://postgres@127.0.0.1:${proxy.port}/${database.name}`,
      SETTLE_DATA_DIR: undefined,
    });
    key = (await createRuntimeKey(await getDb(), "rt-down")).key;
  });

  afterAll(async () => {
    await closeDb();
    await proxy?.close();
    await drop?.();
  });

  const record = (id: string) => ({
    event_id: id,
    task_id: "t-down",
    invocation_id: `inv-${id}`,
    tool: "send_email",
    effect_class: "send",
    envelope: { outcome: "ok", effect_applied: "yes" },
  });

  it("answers 503 DATABASE_UNAVAILABLE with not_before while down, and recovers without a restart", async () => {
    expect((await call(ingest, { key, body: record("before") })).status).toBe(207);

    await proxy.stop();
    const started = Date.now();
    const down = await call(ingest, { key, body: record("during") });
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({
      ok: false,
      code: "DATABASE_UNAVAILABLE",
      category: "dependency",
      commit_state: "not_committed",
      next_action: "wait_and_retry",
      retry: { directive: "after_delay", not_before: expect.any(String) },
    });
    expect(Date.parse(down.body.retry.not_before)).toBeGreaterThan(started);
    const sick = await call(health);
    expect(sick.status).toBe(503);
    expect(sick.body.code).toBe("DATABASE_UNAVAILABLE");
    const read = await call(getInvocation, { key, params: { invocation_id: "inv-before" } });
    expect(read.status).toBe(503);

    await proxy.start();
    const again = await call(ingest, { key, body: record("during") });
    expect(again.status).toBe(207);
    expect(again.body.results[0].status).toBe("accepted");
    expect((await call(health)).body).toEqual({ ok: true, db: "up", database: "postgres" });
  });
});
