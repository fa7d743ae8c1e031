import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { health, openapi } from "./routes";
import { GET as unrouted } from "@/app/api/[...path]/route";
import { GET as queue } from "@/app/api/v1/queue/route";
import { openApiDocument } from "@/server/openapi";

describe("health, OpenAPI and unknown paths", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("pglite");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("health answers ok with the database up", async () => {
    const res = await call(health);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, db: "up", database: "pglite" });
  });

  it("serves an OpenAPI 3.1 document generated from the routes' declarations", async () => {
    const res = await call(openapi);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    // The same document the registry builds (tests/integration/openapi.test.ts checks it in depth), the route describing itself too.
    expect(res.body).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(res.body.paths["/api/v1/openapi.json"].get.security).toEqual([]);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/envelopes",
        "/api/v1/invocations",
        "/api/v1/invocations/{invocation_id}",
        "/api/v1/tasks/{task_id}",
        "/api/health",
      ]),
    );
    const schemas = res.body.components.schemas;
    expect(schemas.ErrorEnvelope.required).toEqual(
      expect.arrayContaining(["ok", "code", "commit_state", "retry", "next_action", "operation_ref"]),
    );
    expect(schemas.Invocation.properties.status.enum).toContain("outcome_unknown");
    expect(schemas.IngestRecord.required).toEqual(expect.arrayContaining(["task_id", "tool"]));
    const refs = [...JSON.stringify(res.body).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(20);
    for (const id of refs) expect(Object.keys(schemas)).toContain(id);
    for (const path of [
      "/api/v1/queue",
      "/api/v1/bulk-actions",
      "/api/v1/audit",
      "/api/v1/admin/users",
      "/api/v1/me/tokens",
      "/api/v1/invocations/{invocation_id}/actions",
    ]) {
      expect(Object.keys(res.body.paths)).toContain(path);
    }
  });

  it("an unknown API path is a 404 error envelope, not an HTML page", async () => {
    const res = await call(unrouted, { path: "/api/v2/nothing" });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(res.body).toMatchObject({ ok: false, code: "NOT_FOUND" });
  });

  it("the console's queue is not anonymous; a runtime key and a viewer may read it", async () => {
    const anonymous = await call(queue, { path: "/api/v1/queue" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ ok: false, code: "UNAUTHENTICATED" });
    expect((await call(queue, { path: "/api/v1/queue", key: t.key })).status).toBe(200);
    const { token } = await createOperator(t.db, "viewer");
    const res = await call(queue, { path: "/api/v1/queue", key: token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ items: [], next_cursor: null, total: 0 });
  });
});

describe("methods a route does not serve", () => {
  it("answer 405 with the error envelope and an Allow header", async () => {
    const { DELETE } = await import("@/app/api/v1/envelopes/route");
    const res = await call(DELETE, { method: "DELETE", path: "/api/v1/envelopes" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.body).toMatchObject({ ok: false, code: "METHOD_NOT_ALLOWED", next_action: "correct_input" });
  });
});
