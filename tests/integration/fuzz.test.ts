import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as actions } from "@/app/api/v1/invocations/[invocation_id]/actions/route";
import { GET as audit } from "@/app/api/v1/audit/route";
import { GET as metricCases } from "@/app/api/v1/metrics/cases/route";
import { GET as queue } from "@/app/api/v1/queue/route";
import { GET as timeline } from "@/app/api/v1/tasks/[task_id]/timeline/route";
import { errorEnvelopeSchema } from "@/lib/errors";
import { metricCasesPageSchema, metricNames } from "@/lib/metrics/schema";
import { cleanText } from "@/lib/redact/redact";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { getDecision, getInvocation, getTask, guard, ingest, listInvocations } from "./routes";
import { POST as authPost } from "@/app/api/auth/[...all]/route";
import {
  authBody,
  badRecord,
  deepBody,
  deepRecordText,
  deepValue,
  envelopeArb,
  goodRecord,
  hostileNumber,
  hostileText,
  hostileTime,
  hostileValue,
  longIntegerRecordText,
  longIntegerToken,
  ndjsonLine,
} from "./fuzz-inputs";
import { parseExactJson } from "@/lib/json/exact";

// Hostile input, generated, against the real route handlers (decision
// 012's "a caller's data never causes a 5xx and never fails a neighbour"):
// wrong types, extreme numbers, far dates, prototype keys, deep nesting, odd
// Unicode and SQL fragments, over ingest (one record, batches, NDJSON), the
// guard, decisions, operator actions and the read API's ids, filters and
// cursors. Every answer is below 500, every error is Settle's typed envelope,
// every 207 has one result per record, and in a mixed batch every good record
// is stored and readable, whatever its neighbours are.

type Answer = { status: number; body: any; headers: Headers };
let requests = 0;

function settled(label: string, res: Answer): Answer {
  requests += 1;
  if (res.status >= 500) throw new Error(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  if (res.status >= 400) {
    const parsed = errorEnvelopeSchema.safeParse(res.body);
    if (!parsed.success)
      throw new Error(`${label}: ${res.status} without Settle's envelope: ${JSON.stringify(res.body).slice(0, 300)}`);
  }
  return res;
}

describe("hostile input never gets a 5xx, never an untyped error, never costs a neighbour", () => {
  let t: TestContext;
  let operator: string;
  let manager: string;
  const knownIds: string[] = [];

  beforeAll(async () => {
    t = await openSettle("postgres");
    operator = (await createOperator(t.db, "operator")).token;
    manager = (await createOperator(t.db, "manager")).token;
  });
  afterAll(async () => {
    console.log(`fuzz: ${requests} requests`);
    expect(requests).toBeGreaterThanOrEqual(2_000);
    await t?.teardown();
  });

  it("ingest, one record a request", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(goodRecord, badRecord, hostileValue), async (record) => {
        const res = settled("ingest one", await call(ingest, { key: t.key, body: record }));
        if (res.status === 207) expect(res.body.results).toHaveLength(recordsIn(record));
      }),
      { numRuns: 500 },
    );
  });

  it("ingest batches: one result per record, and every good record stored and readable", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            { weight: 2, arbitrary: goodRecord },
            { weight: 1, arbitrary: badRecord },
            { weight: 1, arbitrary: hostileValue },
          ),
          { minLength: 1, maxLength: 12 },
        ),
        async (records) => {
          const res = settled("ingest batch", await call(ingest, { key: t.key, body: { records } }));
          expect(res.status).toBe(207);
          expect(res.body.results.map((r: { index: number }) => r.index)).toEqual(records.map((_, i) => i));
          for (const [i, record] of records.entries()) {
            if (!isGood(record)) continue;
            expect(res.body.results[i].status, JSON.stringify(res.body.results[i])).not.toBe("rejected");
          }
          const good = records.filter(isGood);
          const last = good.at(-1);
          if (last) {
            knownIds.push(last.invocation_id);
            const read = settled(
              "read back",
              await call(getInvocation, { key: t.key, params: { invocation_id: last.invocation_id } }),
            );
            expect(read.status).toBe(200);
            expect(read.body.attempts.map((a: { event_id: string }) => a.event_id)).toContain(last.event_id);
            expect(read.body.invocation_id).toBe(cleanText(last.invocation_id));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("ingest NDJSON: a line that is not a record rejects that line only", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            goodRecord.map((r) => JSON.stringify(r)),
            ndjsonLine,
          ),
          { minLength: 1, maxLength: 10 },
        ),
        async (lines) => {
          const res = settled(
            "ndjson",
            await call(ingest, { key: t.key, raw: lines.join("\n"), contentType: "application/x-ndjson" }),
          );
          if (res.status === 207) expect(res.body.results).toHaveLength(lines.filter((l) => l.trim() !== "").length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("integers past 2^53 anywhere in a record, NDJSON and the guard: never a 5xx; in arguments every digit comes back", async () => {
    await fc.assert(
      fc.asyncProperty(longIntegerRecordText, fc.boolean(), async ({ text, place, token }, ndjson) => {
        const res = settled(
          "long integer",
          await call(ingest, {
            key: t.key,
            raw: ndjson ? `${text}\n{"task_id": 12345678901234567890}` : `{"records": [${text}]}`,
            contentType: ndjson ? "application/x-ndjson" : "application/json",
          }),
        );
        if (res.status !== 207) return;
        const record = parseExactJson(text) as { invocation_id: string; arguments?: { order?: unknown } };
        if (ndjson) expect(res.body.results[1].status).toBe("rejected");
        const exact = place === "arguments.order" && /^-?[1-9]\d{15,99}$/.test(token);
        if (res.body.results[0].status !== "accepted" || !exact) return;
        const read = await getInvocation(
          new Request("http://settle.test/x", { headers: { authorization: `Bearer ${t.key}` } }),
          { params: Promise.resolve({ invocation_id: record.invocation_id }) },
        );
        const body = parseExactJson(await read.text()) as { attempts: Array<{ arguments: { order: unknown } }> };
        expect(String(body.attempts[0]!.arguments.order)).toBe(token);
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(
        longIntegerToken,
        fc.constantFrom("arguments", "envelope", "budget_left_s", "at", "effect_class", "task_id"),
        async (token, place) => {
          const fields: Record<string, string> = {
            task_id: '"g-long"',
            tool: '"charge_card"',
            idempotency_key: `"k-${requests}"`,
            arguments: `{"order": ${place === "arguments" ? token : 1}, "note": "{\\"n\\": 1}"}`,
          };
          fields[place] = place === "arguments" || place === "envelope" ? `{"order": ${token}}` : token;
          const raw = `{${Object.entries(fields)
            .map(([k, v]) => `"${k}": ${v}`)
            .join(", ")}}`;
          settled("guard long integer", await call(guard, { key: t.key, path: "/api/v1/guard", raw }));
        },
      ),
      { numRuns: 100 },
    );
  });

  it("the guard", async () => {
    const field = fc.oneof(hostileText, hostileNumber, fc.constant(null), hostileValue);
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            task_id: field,
            invocation_id: fc.option(field),
            tool: field,
            idempotency_key: field,
            effect_class: fc.option(field),
            at: fc.option(fc.oneof(hostileTime, field)),
          },
          { requiredKeys: [] },
        ),
        async (body) => {
          settled("guard", await call(guard, { key: t.key, body, path: "/api/v1/guard" }));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("decisions, with hostile ids and waits", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileText, fc.constantFrom(...(knownIds.length ? knownIds : ["none"]))),
        fc.option(fc.oneof(hostileText, hostileNumber.map(String))),
        async (id, given) => {
          // A wait of more than 0 s (up to 60) holds the request that long: those are sent as 0.
          const n = Number(given);
          const wait = given !== null && Number.isFinite(n) && n > 0 && n <= 60 ? "0" : given;
          const query = wait === null ? "" : `?wait=${encodeURIComponent(wait.toWellFormed())}`;
          const req = new Request(`http://settle.test/api/v1/invocations/${segment(id)}/decision${query}`, {
            headers: { authorization: `Bearer ${t.key}` },
          });
          const res = await getDecision(req, { params: Promise.resolve({ invocation_id: id }) });
          const text = await res.text();
          settled("decision", { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("operator actions", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileText, fc.constantFrom(...(knownIds.length ? knownIds : ["none"]))),
        fc.oneof(
          hostileValue,
          fc.record(
            {
              action: fc.oneof(
                fc.constantFrom(
                  "approve",
                  "reject",
                  "request_verification",
                  "record_verification",
                  "mark_reconciled",
                  "escalate",
                  "assign",
                  "unassign",
                  "comment",
                ),
                hostileText,
              ),
              version: fc.oneof(hostileNumber, fc.integer({ min: 0, max: 5 })),
              note: fc.option(hostileText),
              result: fc.option(fc.oneof(fc.constantFrom("found", "absent", "inconclusive"), hostileText)),
              commit_state: fc.option(fc.oneof(fc.constantFrom("committed", "not_committed"), hostileText)),
              assignee: fc.option(hostileText),
              evidence: fc.option(hostileText),
              runtime: fc.option(hostileText),
            },
            { requiredKeys: ["action", "version"] },
          ),
        ),
        async (id, body) => {
          settled(
            "action",
            await call(actions, {
              key: operator,
              body,
              params: { invocation_id: id },
              method: "POST",
              path: `/api/v1/invocations/${segment(id)}/actions`,
            }),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the read API: ids, filters and cursors that Settle did not hand out", async () => {
    const reads = [
      { name: "invocation", route: getInvocation, param: "invocation_id", query: ["runtime"] },
      { name: "task", route: getTask, param: "task_id", query: ["runtime"] },
      { name: "timeline", route: timeline, param: "task_id", query: ["runtime", "limit"] },
      {
        name: "list",
        route: listInvocations,
        param: null,
        query: ["status", "tool", "runtime", "effect_class", "q", "cursor", "limit"],
      },
      {
        name: "queue",
        route: queue,
        param: null,
        query: ["status", "tool", "runtime", "effect_class", "assignee", "age", "q", "cursor", "limit"],
      },
      {
        name: "audit",
        route: audit,
        param: null,
        query: ["actor", "action", "runtime", "tool", "q", "from", "to", "cursor", "limit"],
      },
    ] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...reads),
        hostileText,
        fc.dictionary(
          fc.constantFrom(
            "status",
            "tool",
            "runtime",
            "effect_class",
            "assignee",
            "age",
            "q",
            "cursor",
            "limit",
            "from",
            "to",
            "actor",
            "action",
          ),
          fc.oneof(hostileText, hostileTime, hostileNumber.map(String), fc.base64String()),
        ),
        async (read, id, query) => {
          const search = new URLSearchParams(
            Object.entries(query).filter(([k]) => (read.query as readonly string[]).includes(k)),
          );
          const path = `/api/v1/${read.name}/${read.param ? segment(id) : ""}?${search}`;
          settled(
            read.name,
            await call(read.route as never, { key: operator, params: read.param ? { [read.param]: id } : {}, path }),
          );
        },
      ),
      { numRuns: 350 },
    );
  });

  it("a metric's cases: every metric under hostile filters and cursors, and a well-formed page when it answers", async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...metricNames),
        fc.dictionary(
          fc.constantFrom("tool", "runtime", "from", "to", "cursor", "limit"),
          fc.oneof(hostileText, hostileTime, hostileNumber.map(String)),
          { maxKeys: 2 },
        ),
        async (metric, query) => {
          const path = `/api/v1/metrics/cases?${new URLSearchParams({ ...query, metric })}`;
          const res = settled("metrics/cases", await call(metricCases as never, { key: manager, path }));
          if (res.status === 200) {
            answered += 1;
            expect(metricCasesPageSchema.safeParse(res.body).success).toBe(true);
          }
        },
      ),
      { numRuns: 150 },
    );
    expect(answered).toBeGreaterThan(0);
  });

  it("deep nesting and prototype keys inside an envelope are kept as evidence or rejected alone", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(deepValue, envelopeArb), goodRecord, async (envelope, neighbour) => {
        const res = settled(
          "deep",
          await call(ingest, {
            key: t.key,
            body: { records: [{ ...neighbour, event_id: `${neighbour.event_id}:x`, envelope }, neighbour] },
          }),
        );
        expect(res.status).toBe(207);
        expect(res.body.results[1].status).not.toBe("rejected");
      }),
      { numRuns: 150 },
    );
  });
});

describe("hostile shapes: bodies nested thousands deep, and oversized account requests", () => {
  let t: TestContext;
  let operator: string;
  beforeAll(async () => {
    t = await openSettle("postgres");
    operator = (await createOperator(t.db, "operator")).token;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("a JSON body nested past 128 levels anywhere is a typed 400 on the guard and operator actions", async () => {
    await fc.assert(
      fc.asyncProperty(deepBody, async (raw) => {
        const answers = [
          settled("deep guard", await call(guard, { key: t.key, raw, path: "/api/v1/guard" })),
          settled(
            "deep action",
            await call(actions, {
              key: operator,
              raw,
              params: { invocation_id: "i" },
              method: "POST",
              path: "/api/v1/invocations/i/actions",
            }),
          ),
        ];
        for (const answer of answers)
          expect(answer.body).toMatchObject({ code: "INVALID_REQUEST", safe_details: { limit_depth: 128 } });
      }),
      { numRuns: 60 },
    );
  });

  it("an ingest record nested past 128 levels is rejected alone, in a batch and in NDJSON", async () => {
    await fc.assert(
      fc.asyncProperty(deepRecordText, goodRecord, fc.boolean(), async (deep, neighbour, ndjson) => {
        const good = JSON.stringify(neighbour);
        const res = ndjson
          ? settled(
              "deep ndjson",
              await call(ingest, { key: t.key, raw: `${deep}\n${good}`, contentType: "application/x-ndjson" }),
            )
          : settled("deep batch", await call(ingest, { key: t.key, raw: `{"records":[${deep},${good}]}` }));
        expect(res.status).toBe(207);
        expect(res.body.results[0].error.code).toMatch(/^(RECORD|ENVELOPE)_TOO_DEEP$/);
        expect(res.body.results[1].status).not.toBe("rejected");
      }),
      { numRuns: 60 },
    );
  });

  it("/api/auth/* bodies: over 64 KiB is a 413 envelope, declared or streamed, an endpoint not served a 404, and nothing is a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(authBody, async ({ path, body, declared }) => {
        const bytes = new TextEncoder().encode(body);
        const headers: Record<string, string> = { "content-type": "application/json", origin: "http://settle.test" };
        if (declared) headers["content-length"] = String(bytes.byteLength);
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            for (let i = 0; i < bytes.byteLength; i += 16 * 1024) controller.enqueue(bytes.subarray(i, i + 16 * 1024));
            controller.close();
          },
        });
        const res = await authPost(
          new Request(`http://settle.test${path}`, {
            method: "POST",
            headers,
            body: stream,
            duplex: "half",
          } as RequestInit),
        );
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* judged below: a 4xx must be an envelope */
        }
        // Better Auth's endpoints Settle does not serve (its own password and account ones) refuse before reading.
        if (!["/api/auth/sign-in/email", "/api/auth/sign-out"].includes(path)) {
          settled("auth", { status: res.status, body: parsed, headers: res.headers });
          expect(res.status).toBe(404);
        } else if (bytes.byteLength > 64 * 1024) {
          settled("auth", { status: res.status, body: parsed, headers: res.headers });
          expect(res.status).toBe(413);
        } else {
          expect(res.status, `${path}: ${text.slice(0, 200)}`).toBeLessThan(500);
        }
      }),
      { numRuns: 80 },
    );
  });
});

/** How many records a JSON body holds (docs/outcome-model.md §2): an array's items, {"records": […]}'s, else the one. */
function recordsIn(body: unknown): number {
  if (Array.isArray(body)) return body.length;
  const records = (body as { records?: unknown } | null)?.records;
  return Array.isArray(records) ? records.length : 1;
}

/** A path segment for any string, lone surrogates too (the route gets the id itself as its parameter). */
const segment = (s: string) => encodeURIComponent(s.toWellFormed());

function isGood(record: unknown): record is { event_id: string; invocation_id: string; good: true } {
  return typeof record === "object" && record !== null && (record as { good?: unknown }).good === true;
}
