import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "@/lib/evidence/canonical";
import { readPublicKey } from "@/lib/evidence/format";
import { rotateEvidenceKey } from "@/lib/evidence/keys";
import { evidenceKeysSchema } from "@/lib/evidence/schemas";
import { verifyEvidence } from "@/lib/evidence/verify-pack";
import { webhookEndpointSchema } from "@/lib/webhooks/endpoints";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { expectSettled, hostileText, hostileValue } from "./fuzz-inputs";
import { ingest } from "./routes";

// Hostile input against what issue 41 added: an invocation's evidence pack (ids, runtime choices, the download
// flag, every kind of caller), the public keys (/.well-known/settle-evidence-key serves the same handler) with
// rotations in between, and OTLP destinations (URLs, kinds, headers; then changes). Every answer is below 500
// and typed; every pack answered verifies against the keys published after it; no header value is answered or
// kept in the admin audit.

const evidence = apiRoutes["/api/v1/invocations/{invocation_id}/evidence"];
const keysRoute = apiRoutes["/api/v1/evidence-keys"];
const endpoints = apiRoutes["/api/v1/admin/webhooks"];
const endpoint = apiRoutes["/api/v1/admin/webhooks/{endpoint_id}"];

const MARK = "hdr-value-never-shown";
/** Percent-encoded UTF-8 of any text, lone surrogates included (encodeURIComponent throws on them). */
const enc = (text: string) => [...Buffer.from(text, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
const queryPart = fc.oneof(hostileText, fc.constantFrom("1", "0", "true", "%", "%zz", "&", "=", "#"));

describe("hostile input to evidence packs, their keys and OTLP destinations", () => {
  let t: TestContext;
  let admin: string;
  let viewer: string;
  const ids = ["fz-1", "fz-2", "fz 3/ü"];

  beforeAll(async () => {
    t = await openSettle("postgres");
    admin = (await createOperator(t.db, "admin")).token;
    viewer = (await createOperator(t.db, "viewer")).token;
    for (const id of ids) {
      const res = await call(ingest, {
        key: t.key,
        body: {
          records: ["intent", "outcome"].map((phase) => ({
            event_id: `${id}-${phase}`,
            task_id: "fz-task",
            invocation_id: id,
            tool: "create_refund",
            effect_class: "money",
            phase,
            arguments: { amount: 5, note: "'; DROP TABLE attempts; --" },
            ...(phase === "outcome" ? { envelope: { outcome: "unknown" } } : {}),
          })),
        },
      });
      expect(res.body.rejected).toBe(0);
    }
    // A refused second try: the packs carry a guard refusal too.
    await call(apiRoutes["/api/v1/guard"].POST!, {
      key: t.key,
      path: "/api/v1/guard",
      body: { task_id: "fz-task", tool: "create_refund", idempotency_key: "k", effect_class: "money" },
    });
  });
  afterAll(async () => t?.teardown());

  const published = async () => {
    const res = expectSettled("keys", await call(keysRoute.GET!, { path: "/api/v1/evidence-keys" }));
    return evidenceKeysSchema.parse(res.body).keys.map((k) => {
      const key = readPublicKey(k.public_key)!;
      return { keyId: key.keyId, der: key.der };
    });
  };

  it("the evidence pack: any id, runtime, flag and caller, with key rotations in between", async () => {
    let packs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          id: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ids) }, hostileText),
          runtime: fc.option(fc.oneof(fc.constant("rt-test"), hostileText), { nil: undefined }),
          download: fc.option(queryPart, { nil: undefined }),
          who: fc.constantFrom<"runtime" | "admin" | "viewer" | "none" | "junk">(
            "runtime",
            "admin",
            "viewer",
            "none",
            "junk",
          ),
          rotate: fc.boolean(),
          method: fc.constantFrom("GET", "GET", "GET", "POST", "DELETE"),
        }),
        async ({ id, runtime, download, who, rotate, method }) => {
          if (rotate) await rotateEvidenceKey(t.db);
          const query = new URLSearchParams();
          if (runtime !== undefined) query.set("runtime", runtime);
          if (download !== undefined) query.set("download", download);
          const key = { runtime: t.key, admin, viewer, none: null, junk: "stl_rk_junk" }[who];
          const handler = evidence[method as "GET"]!;
          const res = expectSettled(
            "evidence",
            await call(handler, {
              method,
              key,
              params: { invocation_id: id },
              path: `/api/v1/invocations/${enc(id)}/evidence?${query}`,
            }),
          );
          if (res.status !== 200) return;
          packs += 1;
          expect(method).toBe("GET");
          expect(res.body.pack.invocation.invocation_id).toBe(id);
          expect(verifyEvidence(canonicalJson(res.body), await published())).toMatchObject({ ok: true });
        },
      ),
      { numRuns: 250 },
    );
    expect(packs).toBeGreaterThan(5);
  });

  it("the public keys: any query, header and method; always every key, the active one first", async () => {
    await fc.assert(
      fc.asyncProperty(
        queryPart,
        fc.constantFrom("GET", "GET", "POST", "PUT", "PATCH", "DELETE"),
        fc.oneof(hostileValue, fc.constant(undefined)),
        fc.option(
          fc.oneof(
            fc.constant("Bearer stl_rk_junk"),
            hostileText.filter((h) => /^[\x20-\x7e]*$/.test(h)),
          ),
          {
            nil: undefined,
          },
        ),
        async (q, method, body, authorization) => {
          const res = expectSettled(
            "keys",
            await call(keysRoute[method as "GET"]!, {
              method,
              path: `/api/v1/evidence-keys?${enc(q)}=${enc(q)}`,
              body: method === "GET" ? undefined : body,
              headers: authorization === undefined ? {} : { authorization },
            }),
          );
          if (method !== "GET") return void expect(res.status).toBe(405);
          expect(res.status).toBe(200);
          const keys = evidenceKeysSchema.parse(res.body).keys;
          expect(keys[0]!.retired_at).toBeNull();
          expect(keys.slice(1).every((k) => k.retired_at !== null)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  const headerName = fc.oneof(
    fc.constantFrom("x-team", "Authorization", "Content-Type", "host", "x-honeycomb-team", "__proto__", "a b", ""),
    hostileText,
  );
  const headerValue = fc.oneof(
    fc.constant(MARK),
    hostileText.map((v) => `${MARK}${v}`),
  );
  const url = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom("https://93.184.216.34/v1/traces", "https://93.184.216.34:4318/v1/traces"),
    },
    fc.constantFrom(
      "http://127.0.0.1:4318/v1/traces",
      "https://collector.example.com/v1/traces",
      "http://[::1]/v1/traces",
      "http://user:pass@collector.example.com/v1/traces",
      "ftp://collector.example.com/v1/traces",
      "http://169.254.169.254/latest/meta-data",
      "http://0x7f.1/v1/traces",
      "https://collector.example.com:99999/v1/traces",
    ),
    hostileText,
    hostileText.map((h) => `https://${h}/v1/traces`),
  );

  it("OTLP destinations: any URL, kind and headers, then any change; never a 5xx, never a header value answered", async () => {
    let made = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            runtime: fc.oneof({ weight: 3, arbitrary: fc.constant("rt-test") }, hostileText),
            url,
            kind: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("otlp", "otlp", "webhook") }, hostileValue),
            headers: fc.oneof(
              {
                weight: 2,
                arbitrary: fc.dictionary(fc.constantFrom("x-team", "Authorization", "x-api-key"), headerValue),
              },
              fc.dictionary(headerName, headerValue, { maxKeys: 25 }),
              hostileValue,
            ),
          },
          { requiredKeys: ["runtime", "url"] },
        ),
        fc.oneof(
          fc.record(
            {
              url,
              enabled: fc.oneof(fc.boolean(), hostileValue),
              headers: fc.oneof(
                fc.dictionary(fc.constantFrom("x-team", "x-api-key"), headerValue),
                fc.dictionary(headerName, headerValue, { maxKeys: 25 }),
                hostileValue,
              ),
            },
            { requiredKeys: [] },
          ),
          hostileValue,
        ),
        fc.constantFrom<"admin" | "viewer" | "runtime">("admin", "admin", "admin", "viewer", "runtime"),
        async (body, patch, who) => {
          const key = { admin, viewer, runtime: t.key }[who];
          const res = expectSettled(
            "otlp destination",
            await call(endpoints.POST!, { key, path: "/api/v1/admin/webhooks", body }),
          );
          expect(JSON.stringify(res.body)).not.toContain(MARK);
          if (res.status >= 300) return;
          made += 1;
          const created = webhookEndpointSchema.parse(res.body.endpoint);
          expect(created.header_names.length).toBeLessThanOrEqual(20);
          const changed = expectSettled(
            "otlp destination change",
            await call(endpoint.PATCH!, {
              method: "PATCH",
              key,
              params: { endpoint_id: created.id },
              path: `/api/v1/admin/webhooks/${created.id}`,
              body: patch,
            }),
          );
          expect(JSON.stringify(changed.body)).not.toContain(MARK);
          const read = expectSettled(
            "otlp destination read",
            await call(endpoint.GET!, {
              key,
              params: { endpoint_id: created.id },
              path: `/api/v1/admin/webhooks/${created.id}`,
            }),
          );
          expect(read.status).toBe(200);
          expect(JSON.stringify(read.body)).not.toContain(MARK);
          await call(endpoint.DELETE!, {
            method: "DELETE",
            key,
            params: { endpoint_id: created.id },
            path: `/api/v1/admin/webhooks/${created.id}`,
          });
        },
      ),
      { numRuns: 250 },
    );
    expect(made).toBeGreaterThan(5);
    const audit = await t.db.driver.query<{ text: string }>(
      `SELECT coalesce(before, 'null')::text || coalesce(after, 'null')::text AS text FROM admin_actions`,
    );
    expect(audit.some((a) => a.text.includes(MARK))).toBe(false);
  });
});
