import { readdirSync } from "node:fs";
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { statusOf } from "@/lib/errors";
import { createApiClient, type ApiBody, type ApiMethod, type ApiPathFor, type ApiTransport } from "@/server/api-client";
import { apiRoutes, UNLISTED_ROUTE_FILES } from "@/server/routes";
import { apiOperations, errorsByStatus, openApiDocument, responsesOf } from "@/server/openapi";
import type { Method, RouteMeta } from "@/lib/http/route";
import type { InvocationView } from "@/lib/invocations/read";
import { createOperator, openSettle, type TestContext } from "./harness";

// The API is described once, in each route's withRoute call. This file checks
// that the registry (server/routes.ts) holds every route file, that the
// OpenAPI document is built from the declarations and is valid OpenAPI 3.1,
// that it still has every operation and component clients knew before it was
// generated, and that the typed client's calls and the routes' real answers
// match what they declare.

const API_DIR = fileURLToPath(new URL("../../app/api", import.meta.url));
const METHODS: Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
type Doc = ReturnType<typeof openApiDocument>;
type Operation = {
  summary: string;
  security: unknown[];
  parameters: Array<{ name: string; in: string; required: boolean }>;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { description: string; content?: Record<string, unknown> }>;
};
const operationOf = (doc: Doc, path: string, method: string) =>
  (doc.paths[path] as Record<string, Operation> | undefined)?.[method.toLowerCase()];

/** app/api/v1/tasks/[task_id]/route.ts → /api/v1/tasks/{task_id}; app/v1/traces/route.ts (OTLP's own path) → /v1/traces */
function apiPathOf(root: string, file: string): string {
  const dir = file.split(sep).slice(0, -1).join("/");
  return `/${root}/${dir}`.replace(/\/$/, "").replace(/\[([^\]]+)\]/g, "{$1}");
}

// The API lives under app/api; OTLP/HTTP's trace path is app/v1 (where exporters send by default).
const ROOTS = ["api", "v1"] as const;
const modules = (
  await Promise.all(
    ROOTS.map(async (root) => {
      const dir = root === "api" ? API_DIR : fileURLToPath(new URL(`../../app/${root}`, import.meta.url));
      const found = readdirSync(dir, { recursive: true, encoding: "utf8" })
        .filter((f) => f === "route.ts" || f.endsWith(`${sep}route.ts`))
        .sort();
      return Promise.all(
        found.map(async (file) => ({
          file: `app/${root}/${file.split(sep).join("/")}`,
          path: apiPathOf(root, file),
          mod: (await import(join(dir, file))) as Record<string, unknown>,
        })),
      );
    }),
  )
).flat();
const declared = (mod: Record<string, unknown>) =>
  METHODS.filter((m) => typeof mod[m] === "function" && (mod[m] as { route?: RouteMeta }).route);

describe("the route registry holds every route file", () => {
  it("lists each app/api/**/route.ts under its own path, as the very module", () => {
    const problems: string[] = [];
    const registry = apiRoutes as Record<string, unknown>;
    for (const { file, path, mod } of modules) {
      if (file in UNLISTED_ROUTE_FILES) {
        if (declared(mod).length > 0)
          problems.push(`${file} is unlisted but declares withRoute methods: add it to server/routes.ts`);
        continue;
      }
      if (!(path in registry)) problems.push(`${file} is missing from server/routes.ts (as "${path}")`);
      else if (registry[path] !== mod)
        problems.push(`server/routes.ts lists another module under ${path} than ${file}`);
    }
    const paths = new Set(modules.map((m) => m.path));
    for (const path of Object.keys(registry))
      if (!paths.has(path)) problems.push(`server/routes.ts lists ${path}, which no route file serves`);
    for (const file of Object.keys(UNLISTED_ROUTE_FILES))
      if (!modules.some((m) => m.file === file))
        problems.push(`UNLISTED_ROUTE_FILES names ${file}, which does not exist`);
    expect(problems).toEqual([]);
  });

  it("the document has exactly the methods each route file declares with withRoute", () => {
    const doc = openApiDocument();
    const problems: string[] = [];
    for (const { file, path, mod } of modules) {
      if (file in UNLISTED_ROUTE_FILES) continue;
      const inModule = declared(mod)
        .map((m) => m.toLowerCase())
        .sort();
      const inDoc = Object.keys(doc.paths[path] ?? {}).sort();
      if (inModule.join() !== inDoc.join())
        problems.push(
          `${path}: ${file} declares ${inModule.join(", ") || "nothing"}, the document has ${inDoc.join(", ") || "nothing"}`,
        );
      for (const m of declared(mod)) {
        const meta = (mod[m] as { route: RouteMeta }).route;
        if (operationOf(doc, path, m)?.summary !== meta.summary)
          problems.push(`${m} ${path}: the document's summary is not the route's`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("every operation declares a one-line summary, its answers, and params matching its path", () => {
    const problems: string[] = [];
    for (const { path, method, meta } of apiOperations()) {
      const at = `${method} ${path}`;
      if (!meta.summary.trim() || meta.summary.includes("\n") || meta.summary.length > 140)
        problems.push(`${at}: the summary must be one line`);
      if (responsesOf(meta).length === 0) problems.push(`${at}: no response declared`);
      const segments = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const params = meta.params instanceof z.ZodObject ? Object.keys(meta.params.shape).sort() : [];
      if (segments.join() !== params.join())
        problems.push(`${at}: path segments {${segments.join(", ")}} but params {${params.join(", ")}}`);
    }
    expect(problems).toEqual([]);
  });
});

// Every operation of the hand-written document this one replaced: clients may call any of them.
const OPERATIONS_BEFORE = [
  "post /api/v1/envelopes",
  "get /api/v1/invocations",
  "get /api/v1/invocations/{invocation_id}",
  "get /api/v1/invocations/{invocation_id}/attempts",
  "post /api/v1/invocations/{invocation_id}/actions",
  "get /api/v1/invocations/{invocation_id}/decision",
  "post /api/v1/guard",
  "get /api/v1/tasks/{task_id}",
  "get /api/v1/tasks/{task_id}/timeline",
  "get /api/v1/queue",
  "get /api/v1/queue/ids",
  "post /api/v1/bulk-actions",
  "get /api/v1/saved-views",
  "post /api/v1/saved-views",
  "delete /api/v1/saved-views/{id}",
  "get /api/v1/audit",
  "get /api/v1/metrics",
  "get /api/v1/metrics/cases",
  "get /api/v1/admin/users",
  "post /api/v1/admin/users",
  "patch /api/v1/admin/users/{user_id}",
  "get /api/v1/admin/runtime-keys",
  "post /api/v1/admin/runtime-keys",
  "post /api/v1/admin/runtime-keys/{prefix}/revoke",
  "get /api/v1/me/tokens",
  "post /api/v1/me/tokens",
  "post /api/v1/me/tokens/{prefix}/revoke",
  "get /api/v1/policies",
  "put /api/v1/policies/{effect_class}",
  "delete /api/v1/policies/{effect_class}",
  "get /api/v1/admin/webhooks",
  "post /api/v1/admin/webhooks",
  "get /api/v1/admin/webhooks/{endpoint_id}",
  "patch /api/v1/admin/webhooks/{endpoint_id}",
  "delete /api/v1/admin/webhooks/{endpoint_id}",
  "post /api/v1/admin/webhooks/{endpoint_id}/rotate-secret",
  "get /api/v1/admin/webhooks/{endpoint_id}/deliveries",
  "get /api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}",
  "post /api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend",
  "get /api/health",
];
const COMPONENTS_BEFORE = [
  "ErrorEnvelope",
  "IngestRecord",
  "AttemptLogLine",
  "IngestResult",
  "Invocation",
  "InvocationSummary",
  "Attempt",
  "AttemptPage",
  "ActionEntry",
  "Resolution",
  "InvocationPage",
  "Task",
  "Health",
  "ActionRequest",
  "Decision",
  "GuardRequest",
  "GuardAnswer",
  "QueuePage",
  "QueueItem",
  "Sla",
  "Approvals",
  "Policy",
  "PolicyInput",
  "PolicyChange",
  "PolicyList",
  "QueueTargets",
  "BulkActionRequest",
  "BulkActionResult",
  "SavedView",
  "SavedViewInput",
  "AuditEntry",
  "AuditPage",
  "User",
  "NewUser",
  "UserPatch",
  "RuntimeKey",
  "NewRuntimeKey",
  "PersonalToken",
  "NewPersonalToken",
  "WebhookEndpoint",
  "NewWebhookEndpoint",
  "WebhookEndpointPatch",
  "WebhookEndpointWithSecret",
  "WebhookDelivery",
  "WebhookDeliveryPage",
  "WebhookDeliveryDetail",
  "WebhookAttempt",
  "WebhookEvent",
  "Metrics",
  "MetricCase",
  "MetricCasesPage",
];

describe("the OpenAPI document", () => {
  const doc = openApiDocument();

  it("is valid OpenAPI 3.1 (@seriousme/openapi-schema-validator)", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("the validator does refuse a broken document", async () => {
    const broken = structuredClone(doc) as Doc;
    delete (operationOf(broken, "/api/health", "get")!.responses["200"] as { description?: string }).description;
    expect((await new Validator().validate(broken as Record<string, unknown>)).valid).toBe(false);
  });

  it("keeps every operation and component name of the hand-written document it replaced", () => {
    const now = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`));
    expect(OPERATIONS_BEFORE.filter((op) => !now.includes(op))).toEqual([]);
    expect(COMPONENTS_BEFORE.filter((id) => !(id in doc.components.schemas))).toEqual([]);
  });

  it("every $ref resolves, and no schema of the build is left behind", () => {
    const text = JSON.stringify(doc);
    const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(50);
    for (const target of refs) {
      expect(target).toMatch(/^#\/components\/schemas\/[A-Za-z]\w*$/);
      expect(Object.keys(doc.components.schemas)).toContain(target.split("/").at(-1));
    }
    expect(text).not.toMatch(/__local|__shared|"\$id"|"\$schema"/);
  });

  it("parameters, bodies, answers, errors and security come from the declarations", () => {
    const meta = (path: keyof typeof apiRoutes, method: Method) =>
      (apiRoutes[path] as unknown as Record<string, { route: RouteMeta }>)[method]!.route;
    const op = (path: string, method: string) => operationOf(doc, path, method)!;

    const attempts = op("/api/v1/invocations/{invocation_id}/attempts", "get");
    expect(attempts.parameters.map((p) => `${p.in}:${p.name}${p.required ? "!" : ""}`)).toEqual([
      "path:invocation_id!",
      "query:runtime",
      "query:before",
      "query:limit",
    ]);
    expect(op("/api/v1/metrics/cases", "get").parameters.find((p) => p.name === "metric")?.required).toBe(true);

    expect(Object.keys(op("/api/v1/envelopes", "post").requestBody!.content)).toEqual([
      "application/json",
      "application/x-ndjson",
    ]);
    expect(op("/api/v1/guard", "post").requestBody!.content).toEqual({
      "application/json": { schema: { $ref: "#/components/schemas/GuardRequest" } },
    });
    expect(Object.keys(op("/api/v1/envelopes", "post").responses)).toContain("207");
    expect(Object.keys(op("/api/v1/admin/users", "post").responses)).toContain("201");
    expect(op("/api/v1/invocations/{invocation_id}/decision", "get").responses["304"]).toMatchObject({
      headers: { ETag: {} },
    });
    expect(Object.keys(op("/api/v1/audit", "get").responses["200"]!.content!)).toEqual([
      "application/json",
      "text/csv",
    ]);

    // Each error status lists its codes; the declared ones and those the route's auth, inputs and database bring.
    for (const { path, method, meta: m } of apiOperations()) {
      for (const [status, codes] of errorsByStatus(m, method)) {
        const answer = op(path, method).responses[String(status)]!;
        expect(answer.content).toEqual({
          "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } },
        });
        for (const code of codes) expect(answer.description).toContain(code);
      }
      for (const code of m.errors) expect(Object.keys(op(path, method).responses)).toContain(String(statusOf(code)));
    }
    expect(meta("/api/v1/invocations/{invocation_id}/actions", "POST").errors).toEqual(
      expect.arrayContaining(["VERSION_CONFLICT", "TRANSITION_REFUSED"]),
    );
    expect(op("/api/v1/invocations/{invocation_id}/actions", "post").responses["409"]!.description).toMatch(
      /VERSION_CONFLICT.*TRANSITION_REFUSED/,
    );
    expect(Object.keys(op("/api/health", "get").responses)).not.toContain("401");

    expect(op("/api/v1/envelopes", "post").security).toEqual([{ runtimeKey: [] }]);
    expect(op("/api/v1/invocations", "get").security).toEqual([
      { runtimeKey: [] },
      { personalToken: [] },
      { session: [] },
    ]);
    expect(op("/api/v1/admin/users", "get").security).toEqual([{ personalToken: [] }, { session: [] }]);
    expect(op("/api/v1/me/tokens", "post").security).toEqual([{ session: [] }]);
    expect(op("/api/health", "get").security).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// The typed client, against the routes themselves

describe("the typed client and the routes' real answers", () => {
  let t: TestContext;
  let admin: string;
  beforeAll(async () => {
    t = await openSettle("pglite");
    admin = (await createOperator(t.db, "admin")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  /** Calls the route module the registry names for the path, in process; records what each answer was checked against. */
  const checked: string[] = [];
  const transport =
    (key: string): ApiTransport =>
    async ({ method, path, headers, body }) => {
      const url = new URL(path, "http://settle.test");
      for (const [template, mod] of Object.entries(apiRoutes)) {
        const names: string[] = [];
        const pattern = new RegExp(
          `^${template.replace(/\{(\w+)\}/g, (_, name: string) => (names.push(name), "([^/]+)"))}$`,
        );
        const match = pattern.exec(url.pathname);
        if (!match) continue;
        const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(match[i + 1]!)]));
        const handler = (mod as unknown as Record<string, (req: Request, ctx: unknown) => Promise<Response>>)[method]!;
        const res = await handler(
          new Request(url, { method, headers: { ...headers, authorization: `Bearer ${key}` }, body }),
          { params: Promise.resolve(params) },
        );
        const text = await res.text();
        const answer = { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
        // The answer must be what the route declares for its status.
        const route = (handler as { route?: RouteMeta }).route;
        const spec = route && responsesOf(route).find(([status]) => status === answer.status)?.[1];
        if (spec?.schema) {
          spec.schema.parse(answer.body);
          checked.push(`${method} ${template} ${answer.status}`);
        }
        return answer;
      }
      return { status: 404, body: undefined };
    };

  it("types each call from the route's declaration", () => {
    expectTypeOf<ApiMethod<"/api/v1/admin/webhooks/{endpoint_id}">>().toEqualTypeOf<"GET" | "PATCH" | "DELETE">();
    expectTypeOf<ApiBody<"/api/v1/invocations/{invocation_id}", "GET">>().toEqualTypeOf<InvocationView>();
    expectTypeOf<ApiPathFor<"PATCH">>().toEqualTypeOf<
      | "/api/v1/admin/users/{user_id}"
      | "/api/v1/admin/tool-catalog/{entry_id}"
      | "/api/v1/admin/webhooks/{endpoint_id}"
      | "/api/v1/admin/notifications/{channel_id}"
    >();
  });

  it("ingests, reads back and lists through the typed client; every answer matches its declared schema", async () => {
    const runtime = createApiClient(transport(t.key));
    const person = createApiClient(transport(admin));
    const record = {
      task_id: "typed-1",
      tool: "refund",
      idempotency_key: "k-typed-1",
      phase: "outcome",
      envelope: { outcome: "retryable", effect_applied: "no" },
    } as const;

    const ingested = await runtime.post("/api/v1/envelopes", {
      content: { type: "application/x-ndjson", text: JSON.stringify(record) },
    });
    expect(ingested.ok).toBe(true);
    if (!ingested.ok) return;
    expect(ingested.status).toBe(207);
    expect(ingested.body.accepted).toBe(1);
    const invocationId = ingested.body.results[0]!.invocation_id!;

    const json = await runtime.post("/api/v1/envelopes", {
      body: { ...record, task_id: "typed-2", idempotency_key: "k-typed-2" },
    });
    expect(json).toMatchObject({ ok: true, status: 207, body: { accepted: 1 } });

    const read = await person.get("/api/v1/invocations/{invocation_id}", {
      params: { invocation_id: invocationId },
      query: { runtime: t.runtime },
    });
    expect(read.ok && read.body.invocation_id).toBe(invocationId);

    const listed = await person.get("/api/v1/invocations", { query: { q: "typed-", limit: 10 } });
    expect(listed.ok && listed.body.items.map((i) => i.task_id).sort()).toEqual(["typed-1", "typed-2"]);

    const task = await person.get("/api/v1/tasks/{task_id}", { params: { task_id: "typed-1" } });
    expect(task.ok && task.body.invocations).toHaveLength(1);

    for (const answer of [
      await person.get("/api/v1/queue"),
      await person.get("/api/v1/policies"),
      await person.get("/api/v1/me/tokens"),
      await person.get("/api/v1/admin/users"),
      await person.get("/api/v1/admin/runtime-keys"),
      await person.get("/api/v1/invocations/{invocation_id}/attempts", { params: { invocation_id: invocationId } }),
      await person.get("/api/v1/tasks/{task_id}/timeline", { params: { task_id: "typed-1" } }),
      await person.post("/api/v1/admin/users", { body: { email: "typed@example.com", role: "viewer" } }),
      await runtime.get("/api/v1/invocations/{invocation_id}/decision", { params: { invocation_id: invocationId } }),
      await runtime.get("/api/health"),
      await runtime.get("/api/v1/openapi.json"),
    ]) {
      expect(answer.ok, JSON.stringify(answer.body)).toBe(true);
    }

    const missing = await person.get("/api/v1/invocations/{invocation_id}", { params: { invocation_id: "no-such" } });
    expect(missing).toMatchObject({ ok: false, status: 404, error: { code: "NOT_FOUND" } });
    expect(checked.length).toBeGreaterThanOrEqual(15);
  });
});
