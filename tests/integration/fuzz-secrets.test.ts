import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addToolCatalogEntry } from "@/lib/catalog/catalog";
import { runVerifications } from "@/lib/verify/schedule";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type TestContext } from "./harness";

// A value placed under any secret-looking name — a key, the name of a name/value pair, the key of `key=value`
// in text — at any depth of a call's arguments, its envelope, a verifier's evidence or a person's note, never
// comes back from any read endpoint: not to the runtime, its verifier workers, a viewer, the queue's summary
// or the audit trail (issue 36: pairs, `pwd`, `Pass_Word`, a Cyrillic `password`, `DB_PASSWORD=…` and an
// automatic summary reading `pwd hunter2` all came back).

const r = (path: keyof typeof apiRoutes, method: "GET" | "POST") =>
  (apiRoutes[path] as unknown as Record<string, Parameters<typeof call>[0]>)[method]!;
const ingest = r("/api/v1/envelopes", "POST");
const act = r("/api/v1/invocations/{invocation_id}/actions", "POST");
const takeWork = r("/api/v1/verifications", "GET");
const answer = r("/api/v1/verifications/{verification_id}", "POST");

const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const verify = { after_s: 30, every_s: 60, max_tries: 5, absent_after_s: 120, lease_s: 30 };

/** The names a secret hides behind, and the ways a name is spelt. */
const baseName = fc.constantFrom(
  "password",
  "pwd",
  "pin",
  "otp",
  "cvc",
  "credit_card",
  "api_key",
  "token",
  "client_secret",
  "authorization",
  "cookie",
  "passcode",
  "private_key",
  "access_key",
  "session_id",
  "card_number",
  "DB_PASSWORD",
  "X-Api-Key",
  "2fa",
  "auth",
);
const LOOK_ALIKES: Record<string, string> = { a: "а", e: "е", o: "о", p: "р", c: "с", x: "х", i: "і" };
const FULLWIDTH = (c: string) => String.fromCharCode(c.charCodeAt(0) + 0xfee0);
const spelling = fc.constantFrom(
  (n: string) => n,
  (n: string) => n.toUpperCase(),
  (n: string) => n.replace(/(^|_)(\w)/g, (_m, _s, c: string) => c.toUpperCase()),
  (n: string) => n.replace(/_/g, "-"),
  (n: string) => n.replace(/_/g, "."),
  (n: string) => `my_${n}`,
  (n: string) => `${n}_value`,
  (n: string) => `x-${n}`,
  (n: string) => n.replace(/[aeopcxi]/, (c) => LOOK_ALIKES[c]!),
  (n: string) => n.replace(/[aeopcxi]/g, (c) => LOOK_ALIKES[c]!),
  (n: string) => n.replace(/[a-z]/g, FULLWIDTH),
  (n: string) => `${n.slice(0, 2)}\u200b${n.slice(2)}`,
  (n: string) => (n.length > 5 ? `${n.slice(0, 3)}_${n.slice(3)}` : n),
);
const secretName = fc.tuple(baseName, spelling).map(([n, spell]) => spell(n));

/** Where the secret sits, given its name and value. */
type Place = (name: string, secret: string) => unknown;
const shapes: fc.Arbitrary<Place> = fc.constantFrom<Place>(
  (name, secret) => ({ [name]: secret }),
  (name, secret) => [
    { name, value: secret },
    { name: "Accept", value: "application/json" },
  ],
  (name, secret) => [{ Name: name, Value: secret }],
  (name, secret) => [{ key: name, value: secret, enabled: true }],
  (name, secret) => [
    [name, secret],
    ["Accept", "text/plain"],
  ],
  (name, secret) => `the upstream said ${name}=${secret} and stopped`,
  (name, secret) => `config:\n  user: bob\n  ${name}: ${secret}\n`,
  (name, secret) => `${name} = "${secret}"`,
  (name, secret) => JSON.stringify({ request: { [name]: secret, region: "eu" } }),
  (name, secret) => JSON.stringify({ headers: [{ name, value: secret }] }),
);
/** Any depth: the placed value inside objects and arrays, beside ordinary members. */
const nesting = fc.array(fc.constantFrom("object", "array", "sibling"), { maxLength: 12 });
function nest(value: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((inner, step, i) => {
    if (step === "array") return [1, inner, "x"];
    if (step === "sibling") return { [`field_${i}`]: inner, amount: 1200, currency: "EUR" };
    return { [`level_${i}`]: inner };
  }, value);
}

describe("a secret under any secret-looking name, at any depth, never comes back", () => {
  let t: TestContext;
  let viewer: string;
  let operator: string;
  let n = 0;

  beforeAll(async () => {
    t = await openSettle("postgres");
    viewer = (await createOperator(t.db, "viewer")).token;
    operator = (await createOperator(t.db, "operator")).token;
    await addToolCatalogEntry(t.db, { runtime: t.runtime, pattern: "smtp_send", effect_class: "send", verify }, "a@x");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  // 120 calls, each stored and read back through every endpoint: more than a minute on a loaded machine.
  it("from arguments, envelopes, evidence and notes, through every read endpoint", async () => {
    await fc.assert(
      fc.asyncProperty(
        secretName,
        shapes,
        nesting,
        fc.constantFrom("arguments", "safe_details", "text part", "evidence", "note"),
        async (name, place, path, where) => {
          n += 1;
          const secret = `Vq${n}Lm${(n * 7919).toString(36)}Tz9`;
          const id = `sec-${n}`;
          const placed = nest(place(name, secret), path);
          const asText = typeof placed === "string" ? placed : JSON.stringify(placed);
          const envelope =
            where === "safe_details"
              ? { ok: false, commit_state: "unknown", code: "UPSTREAM_TIMEOUT", safe_details: { sent: placed } }
              : where === "text part"
                ? { content: [{ type: "text", text: `timed out: ${asText}` }], isError: true }
                : { title: "Gateway Timeout", status: 504 };
          const record = {
            event_id: `${id}-out`,
            task_id: `task-${id}`,
            invocation_id: id,
            tool: where === "evidence" ? "smtp_send" : "smtp_relay",
            idempotency_key: `key-${id}`,
            arguments: { host: "mail.internal", user: "bob", ...(where === "arguments" ? { sent: placed } : {}) },
            at: new Date(NOW.getTime() - 600_000).toISOString(),
            envelope,
          };
          const stored = await call(ingest, { key: t.key, body: record });
          expect(stored.body.results[0].status).toBe("accepted");

          const seen: unknown[] = [];
          const runtimeRead = async (route: keyof typeof apiRoutes, params: Record<string, string>, p: string) =>
            seen.push((await call(r(route, "GET"), { key: t.key, params, path: p })).body);
          if (where === "evidence") {
            await runVerifications(t.db, NOW);
            const work = await call(takeWork, { key: t.key, path: "/api/v1/verifications?worker=fuzz&limit=20" });
            seen.push(work.body);
            const item = work.body.items.find((i: { invocation_id: string }) => i.invocation_id === id);
            expect(item).toBeDefined();
            const answered = await call(answer, {
              key: t.key,
              params: { verification_id: item.id },
              body: { found: true, evidence: `GET /messages → 200 ${asText}`.slice(0, 4096), ref: "msg_1" },
            });
            expect(answered.status).toBe(200);
          }
          if (where === "note") {
            const inv = await call(r("/api/v1/invocations/{invocation_id}", "GET"), {
              key: operator,
              params: { invocation_id: id },
            });
            const acted = await call(act, {
              key: operator,
              params: { invocation_id: id },
              body: { action: "comment", note: `pasted: ${asText}`.slice(0, 4000), version: inv.body.version },
            });
            expect(acted.status).toBe(200);
          }
          await runtimeRead("/api/v1/invocations/{invocation_id}", { invocation_id: id }, `/api/v1/invocations/${id}`);
          await runtimeRead("/api/v1/invocations/{invocation_id}/attempts", { invocation_id: id }, "/x");
          await runtimeRead("/api/v1/invocations/{invocation_id}/decision", { invocation_id: id }, "/x");
          await runtimeRead("/api/v1/invocations/{invocation_id}/verification", { invocation_id: id }, "/x");
          await runtimeRead("/api/v1/tasks/{task_id}", { task_id: `task-${id}` }, "/x");
          await runtimeRead("/api/v1/tasks/{task_id}/timeline", { task_id: `task-${id}` }, "/x");
          await runtimeRead("/api/v1/invocations", {}, "/api/v1/invocations?limit=200");
          for (const [route, p] of [
            ["/api/v1/queue", "/api/v1/queue?limit=200"],
            ["/api/v1/audit", "/api/v1/audit?limit=200"],
            ["/api/v1/invocations/{invocation_id}", `/api/v1/invocations/${id}`],
          ] as const)
            seen.push((await call(r(route, "GET"), { key: viewer, params: { invocation_id: id }, path: p })).body);

          const text = JSON.stringify(seen);
          expect(text).toContain(id);
          expect(text, `${where}: ${asText.slice(0, 200)}`).not.toContain(secret);
        },
      ),
      { numRuns: 120 },
    );
    expect(n).toBe(120);
  }, 180_000);
});
