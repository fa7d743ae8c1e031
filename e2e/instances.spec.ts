import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { startReceiver, type Receiver } from "../tests/integration/webhook-receiver";
import { startInstances, type Instance, type Instances } from "./instances";

// Two `npm start` instances on one PostgreSQL database, as docs/operations.md ("More app instances")
// runs Settle: a setting written through one is in force on the other from its next request
// (docs/decisions/040-settings-on-every-instance.md), and with both running their background jobs every
// piece of work is done once. A runs no jobs until the last test, so what B's job does is B's.

test.describe.configure({ mode: "serial", timeout: 90_000 });

let cluster: Instances;
let a: Instance;
let b: Instance;
let secondKey: string;
const run = randomBytes(3).toString("hex");

test.beforeAll(async () => {
  test.setTimeout(180_000);
  cluster = await startInstances([{ name: "a", env: { SETTLE_BACKGROUND_JOBS: "off" } }, { name: "b" }]);
  a = cluster.instance("a");
  b = cluster.instance("b");
  secondKey = (await cluster.cli(["keys", "create", cluster.runtime, "--name", "second"])).split("\n").at(-1)!.trim();
});
test.afterAll(async () => {
  await cluster?.stop();
});

const asAdmin = (instance: Instance, method: string, path: string, body?: unknown) =>
  cluster.api(instance, method, path, { token: cluster.adminToken, body });
const asRuntime = (instance: Instance, method: string, path: string, body?: unknown) =>
  cluster.api(instance, method, path, { key: cluster.key, body });
const invocation = async (instance: Instance, id: string) => {
  const res = await asRuntime(instance, "GET", `/api/v1/invocations/${encodeURIComponent(id)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

/** An OTLP/JSON export of one GenAI tool span whose call failed (status ERROR), as an agent's SDK sends it. */
function failedToolSpan(tool: string, callId: string) {
  const now = BigInt(Date.now()) * 1_000_000n;
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "refund-agent" } }] },
        scopeSpans: [
          {
            scope: { name: "e2e" },
            spans: [
              {
                traceId: randomBytes(16).toString("hex"),
                spanId: randomBytes(8).toString("hex"),
                name: `execute_tool ${tool}`,
                kind: 1,
                startTimeUnixNano: String(now - 2_000_000_000n),
                endTimeUnixNano: String(now),
                attributes: [
                  { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
                  { key: "gen_ai.tool.name", value: { stringValue: tool } },
                  { key: "gen_ai.tool.call.id", value: { stringValue: callId } },
                ],
                status: { code: 2, message: "upstream timed out" },
              },
            ],
          },
        ],
      },
    ],
  };
}

async function spanTo(instance: Instance, tool: string, callId: string) {
  const res = await asRuntime(instance, "POST", "/v1/traces", failedToolSpan(tool, callId));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return invocation(instance, callId);
}

/** A record whose call timed out: nobody knows whether it happened. */
const unknownCall = (id: string, tool: string, extra: Record<string, unknown> = {}) => ({
  event_id: `${id}:outcome`,
  task_id: `task-${id}`,
  invocation_id: id,
  tool,
  envelope: { ok: false, code: "TIMEOUT", commit_state: "unknown" },
  ...extra,
});

test("a catalog edit and a new entry on one instance are in force on the other from its next request", async () => {
  const created = await asAdmin(a, "POST", "/api/v1/admin/tool-catalog", {
    runtime: cluster.runtime,
    pattern: "refund_payment",
    effect_class: "read",
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // B has read the catalog (and keeps it): a failed read is not committed, and may be retried.
  expect(await spanTo(b, "refund_payment", `warm-${run}`)).toMatchObject({
    effect_class: "read",
    commit_state: "not_committed",
  });

  const edited = await asAdmin(a, "PATCH", `/api/v1/admin/tool-catalog/${created.body.id}`, { effect_class: "money" });
  expect(edited.status).toBe(200);
  // At once, on B: the same failed call is money and unknown, and the runtime is not told it may retry.
  const money = await spanTo(b, "refund_payment", `after-${run}`);
  expect(money).toMatchObject({ effect_class: "money", status: "outcome_unknown", commit_state: "unknown" });
  const decision = await asRuntime(b, "GET", `/api/v1/invocations/after-${run}/decision`);
  expect(decision.body.decision).toBe("wait");

  // A new entry on A, at once on B: a tool no entry named was an unclassified write.
  expect((await spanTo(b, "void_card", `unlisted-${run}`)).effect_class).toBeNull();
  const added = await asAdmin(a, "POST", "/api/v1/admin/tool-catalog", {
    runtime: cluster.runtime,
    pattern: "void_*",
    effect_class: "destructive",
  });
  expect(added.status).toBe(201);
  expect(await spanTo(b, "void_card", `listed-${run}`)).toMatchObject({
    effect_class: "destructive",
    status: "outcome_unknown",
  });
});

test("a key revoked on one instance is refused on the other from its next request", async () => {
  const before = await cluster.api(b, "GET", "/api/v1/tool-catalog", { key: secondKey });
  expect(before.status).toBe(200);
  const revoked = await asAdmin(a, "POST", `/api/v1/admin/runtime-keys/${secondKey.slice(0, 15)}/revoke`);
  expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
  const after = await cluster.api(b, "GET", "/api/v1/tool-catalog", { key: secondKey });
  expect(after.status).toBe(401);
  expect(after.body.code).toBe("KEY_REVOKED");
  const ingest = await cluster.api(b, "POST", "/api/v1/envelopes", {
    key: secondKey,
    body: unknownCall(`revoked-${run}`, "lookup"),
  });
  expect(ingest.status).toBe(401);
});

test("a policy change on one instance is in force on the other's write path at once and applied by its job", async () => {
  const tenMinutesAgo = new Date(Date.now() - 600_000).toISOString();
  const charge = (n: number) =>
    unknownCall(`charge-${n}-${run}`, "charge_card", {
      effect_class: "money",
      idempotency_key: `charge-key-${n}-${run}`,
      arguments: { amount: 4200, to: `acct-${run}` },
      at: tenMinutesAgo,
    });
  // On B, under the built-in money duplicate window (a day): the same charge under a second key is a possible duplicate.
  for (const n of [1, 2]) expect((await asRuntime(b, "POST", "/api/v1/envelopes", charge(n))).status).toBe(207);
  expect((await invocation(b, `charge-2-${run}`)).possible_duplicate_of).toBe(`charge-1-${run}`);

  const policy = await asAdmin(a, "PUT", "/api/v1/policies/money", {
    overdue_after_s: null,
    escalate_after_s: 300,
    approval_expires_after_s: null,
    approval_quorum: 1,
    duplicate_window_s: null,
  });
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  // At once on B: the window is off, so a third key with the same arguments is no longer flagged.
  expect((await asRuntime(b, "POST", "/api/v1/envelopes", charge(3))).status).toBe(207);
  expect((await invocation(b, `charge-3-${run}`)).possible_duplicate_of).toBeNull();
  // And B's job (A runs none) escalates what has waited longer than the new 300 s.
  await expect.poll(async () => (await invocation(b, `charge-1-${run}`)).status, { timeout: 15_000 }).toBe("escalated");
  expect((await asAdmin(a, "DELETE", "/api/v1/policies/money")).status).toBe(200);
});

test("an operator's decision on one instance wakes a runtime's long poll on the other within 2 s", async () => {
  const id = `poll-${run}`;
  expect((await asRuntime(a, "POST", "/api/v1/envelopes", unknownCall(id, "book_flight"))).status).toBe(207);
  const first = await asRuntime(b, "GET", `/api/v1/invocations/${id}/decision`);
  expect(first.body.decision).toBe("wait");
  let answeredAt = 0;
  const poll = cluster
    .api(b, "GET", `/api/v1/invocations/${id}/decision?wait=30`, {
      key: cluster.key,
      headers: { "if-none-match": first.headers.get("etag") ?? "" },
    })
    .then((answer) => {
      answeredAt = performance.now();
      return answer;
    });
  // The poll is held on B meanwhile.
  await new Promise((r) => setTimeout(r, 800));
  expect(answeredAt).toBe(0);
  const { version } = await invocation(a, id);
  const acted = await asAdmin(a, "POST", `/api/v1/invocations/${id}/actions`, {
    action: "mark_reconciled",
    commit_state: "committed",
    note: "found in the airline's booking list",
    version,
    runtime: cluster.runtime,
  });
  expect(acted.status, JSON.stringify(acted.body)).toBe(200);
  const decidedAt = performance.now();
  const answer = await poll;
  expect(answer.status).toBe(200);
  expect(answer.body.decision).toBe("do_not_retry");
  expect(answeredAt - decidedAt).toBeLessThan(2_000);
});

test.describe("with both instances running their jobs", () => {
  let receiver: Receiver;
  // Its own runtime: a runtime with a webhook endpoint is pushed its asks (lib/verify/push.ts), not polled.
  const verifier = `verifier-${run}`;
  let verifierKey: string;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    receiver = await startReceiver();
    [verifierKey] = await Promise.all([
      cluster.cli(["keys", "create", verifier]).then((out) => out.split("\n").at(-1)!.trim()),
      a.restart({ SETTLE_BACKGROUND_JOBS: "on" }),
    ]);
  });
  test.afterAll(async () => {
    await receiver?.close();
  });

  test("every webhook event is delivered once, every verification ask leased to one worker, a burst told once per channel", async () => {
    test.setTimeout(150_000);
    const endpoint = await asAdmin(a, "POST", "/api/v1/admin/webhooks", {
      runtime: cluster.runtime,
      url: receiver.url("/events"),
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    receiver.secrets.set("/events", endpoint.body.secret);
    const channels = ["/slack-1", "/slack-2"];
    for (const path of channels) {
      const channel = await asAdmin(b, "POST", "/api/v1/admin/notifications", {
        kind: "slack",
        url: receiver.url(path),
        runtimes: [cluster.runtime],
        events: ["unknown"],
        digest_s: 4,
      });
      expect(channel.status, JSON.stringify(channel.body)).toBe(201);
    }
    // Settle asks the runtime about reversals a second after they become unknown.
    const verify = { after_s: 1, every_s: 60, max_tries: 3, absent_after_s: 1, lease_s: 120 };
    const entry = await asAdmin(a, "POST", "/api/v1/admin/tool-catalog", {
      runtime: verifier,
      pattern: "reverse_charge",
      effect_class: "money",
      verify,
    });
    expect(entry.status, JSON.stringify(entry.body)).toBe(201);

    // A burst of unknown invoices (told), and of unknown reversals of the verifier's runtime (asked about, not
    // told), half through each instance.
    const refunds = Array.from({ length: 8 }, (_, n) => unknownCall(`reversal-${n}-${run}`, "reverse_charge"));
    const invoices = Array.from({ length: 10 }, (_, n) => unknownCall(`invoice-${n}-${run}`, "send_invoice"));
    // And calls that succeeded: each settles, an event for the endpoint.
    const settled = Array.from({ length: 10 }, (_, n) => ({
      ...unknownCall(`order-${n}-${run}`, "create_order"),
      envelope: { outcome: "ok", effect_applied: "yes" },
    }));
    const half = (list: object[], side: number) => list.filter((_, n) => n % 2 === side);
    await Promise.all(
      [a, b].flatMap((instance, side) => [
        cluster
          .api(instance, "POST", "/api/v1/envelopes", {
            key: cluster.key,
            body: { records: [...half(invoices, side), ...half(settled, side)] },
          })
          .then((res) => expect(res.body.accepted).toBe(10)),
        cluster
          .api(instance, "POST", "/api/v1/envelopes", { key: verifierKey, body: { records: half(refunds, side) } })
          .then((res) => expect(res.body.accepted).toBe(4)),
      ]),
    );

    // Two workers, one on each instance, long-polling for asks: each ask goes to one of them.
    const leased = new Map<string, string[]>([
      ["w-a", []],
      ["w-b", []],
    ]);
    const deadline = Date.now() + 60_000;
    const work = async (worker: string, instance: Instance) => {
      while (Date.now() < deadline && [...leased.values()].flat().length < refunds.length) {
        const res = await cluster.api(instance, "GET", `/api/v1/verifications?worker=${worker}&wait=2&limit=3`, {
          key: verifierKey,
        });
        expect(res.status).toBe(200);
        for (const item of res.body.items as Array<{ id: string }>) {
          leased.get(worker)!.push(item.id);
          const answered = await cluster.api(instance, "POST", `/api/v1/verifications/${item.id}`, {
            key: verifierKey,
            body: { found: true, evidence: `reversal found by ${worker}` },
          });
          expect(answered.status, JSON.stringify(answered.body)).toBe(200);
        }
      }
    };
    await Promise.all([work("w-a", a), work("w-b", b)]);
    const all = [...leased.values()].flat();
    expect(all).toHaveLength(refunds.length);
    expect(new Set(all).size).toBe(refunds.length);
    for (const r of refunds) {
      const read = await cluster.api(a, "GET", `/api/v1/invocations/${r.invocation_id}`, { key: verifierKey });
      expect(read.body.status).toBe("reconciled");
    }

    // The burst of unknown invoices: one message per channel, naming all ten, and no second one.
    await expect
      .poll(() => channels.map((path) => receiver.received.filter((r) => r.path === path).length), {
        timeout: 30_000,
      })
      .toEqual([1, 1]);
    await new Promise((r) => setTimeout(r, 6_000));
    for (const path of channels) {
      const told = receiver.received.filter((r) => r.path === path);
      expect(told).toHaveLength(1);
      expect(told[0]!.body).toContain("10");
    }

    // Every webhook event: delivered, and once.
    const deliveries = async () =>
      (await asAdmin(a, "GET", `/api/v1/admin/webhooks/${endpoint.body.endpoint.id}/deliveries?limit=200`)).body
        .items as Array<{ status: string }>;
    await expect
      .poll(async () => (await deliveries()).filter((d) => d.status !== "delivered").length, { timeout: 30_000 })
      .toBe(0);
    const delivered = (await deliveries()).length;
    const events = receiver.received.filter((r) => r.path === "/events");
    expect(delivered).toBeGreaterThanOrEqual(settled.length);
    expect(events.every((e) => e.verified)).toBe(true);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    expect(events).toHaveLength(delivered);
    // Both instances ran their jobs meanwhile.
    expect(a.output()).toContain('"job"');
    expect(b.output()).toContain('"job"');
  });
});
