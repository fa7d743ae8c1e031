import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, openSettle, type TestContext } from "./harness";
import { getInvocation, ingest } from "./routes";

// Records may arrive late, twice or out of order: the final state must equal
// in-order delivery. fast-check picks stories, shuffles their records,
// repeats some, and cuts the stream into random batches.

const t0 = Date.parse("2026-11-29T05:00:00.000Z");
const at = (s: number) => new Date(t0 + s * 1000).toISOString();
type Rec = Record<string, unknown> & { event_id: string; invocation_id?: string };

const unknownMcp = { content: [{ type: "text", text: "socket hang up" }], isError: true };
const stories: Array<(id: string) => Rec[]> = [
  (id) => [
    { event_id: `${id}-i1`, attempt: 1, phase: "intent", at: at(0) },
    { event_id: `${id}-o1`, attempt: 1, at: at(8), envelope: unknownMcp },
    { event_id: `${id}-p1`, attempt: 1, phase: "probe", at: at(20), envelope: { ok: true, commit_state: "committed" } },
  ],
  (id) => [
    { event_id: `${id}-i1`, attempt: 1, phase: "intent", at: at(0) },
    {
      event_id: `${id}-o1`,
      attempt: 1,
      at: at(3),
      envelope: { outcome: "retryable", effect_applied: "no", retry_after_s: 5 },
    },
    { event_id: `${id}-i2`, attempt: 2, phase: "intent", at: at(9) },
    { event_id: `${id}-o2`, attempt: 2, at: at(11), envelope: { outcome: "ok", effect_applied: "yes" } },
  ],
  (id) => [
    {
      event_id: `${id}-o1`,
      attempt: 1,
      at: at(2),
      envelope: { status: "post_dispatch_evidence_failed", retryable: false },
    },
    {
      event_id: `${id}-p1`,
      attempt: 1,
      phase: "probe",
      at: at(30),
      envelope: { ok: false, commit_state: "not_committed", code: "NOT_FOUND" },
    },
    { event_id: `${id}-i2`, attempt: 2, phase: "intent", at: at(40) },
    {
      event_id: `${id}-o2`,
      attempt: 2,
      at: at(41),
      envelope: {
        type: "function_call_output",
        call_id: "c1",
        output: JSON.stringify({ ok: true, commit_state: "committed" }),
      },
    },
  ],
  (id) => [
    { event_id: `${id}-o1`, attempt: 1, at: at(5), envelope: { ok: true, commit_state: "committed" } },
    { event_id: `${id}-p1`, attempt: 1, phase: "probe", at: at(50), envelope: { outcome: "ok", effect_applied: "no" } },
  ],
  (id) => [
    {
      event_id: `${id}-o1`,
      attempt: 1,
      at: at(1),
      envelope: {
        outcome: "permanent",
        effect_applied: "partial",
        items: [
          { id: "a", applied: "yes" },
          { id: "b", applied: "unknown" },
        ],
      },
    },
  ],
  (id) => [
    {
      event_id: `${id}-o1`,
      attempt: 1,
      at: at(1),
      envelope: { code: "missing_required_field", message: "no date", retryable: false, hint: "add it", field: "date" },
    },
    { event_id: `${id}-i2`, attempt: 2, phase: "intent", at: at(6) },
    {
      event_id: `${id}-o2`,
      attempt: 2,
      at: at(7),
      envelope: { type: "tool_result", tool_use_id: "tu", is_error: true, content: "timeout" },
    },
    {
      event_id: `${id}-p2`,
      attempt: 2,
      phase: "probe",
      at: at(9),
      envelope: { content: [{ type: "text", text: "lookup failed" }], isError: true },
    },
  ],
  (id) => [
    {
      event_id: `${id}-l1`,
      task: "t-lines",
      call: "create_order",
      intent_key: id,
      attempt: 1,
      started: "05:00:00",
      budget_left_s: 42,
    },
    {
      event_id: `${id}-l2`,
      task: "t-lines",
      call: "create_order",
      intent_key: id,
      attempt: 1,
      started: "05:00:00",
      budget_left_s: 42,
      outcome: "unknown",
      probe: "found",
    },
  ],
  (id) => [{ event_id: `${id}-i1`, attempt: 1, phase: "intent", at: at(0), budget_left_s: 60 }],
];

function build(picks: number[]): Rec[] {
  return picks.flatMap((storyIndex, n) => {
    const id = `s${n}-${storyIndex}`;
    return stories[storyIndex]!(id).map((r) =>
      "task" in r
        ? { ...r, intent_key: id }
        : { task_id: `task-${n % 2}`, invocation_id: id, tool: "create_order", effect_class: "create", ...r },
    );
  });
}

describe("delivery order does not change the outcome", () => {
  let t: TestContext;
  let run = 0;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  async function deliver(batches: Rec[][]): Promise<{ key: string; ids: Set<string> }> {
    run += 1;
    const { key } = await createRuntimeKey(t.db, `rt-order-${run}`);
    const ids = new Set<string>();
    for (const records of batches) {
      const res = await call(ingest, { key, body: { records } });
      expect(res.status).toBe(207);
      expect(res.body.rejected).toBe(0);
      for (const r of res.body.results) ids.add(r.invocation_id);
    }
    return { key, ids };
  }

  async function states(key: string, ids: Set<string>) {
    const out: Record<string, unknown> = {};
    for (const id of [...ids].sort()) {
      const { body } = await call(getInvocation, { key, params: { invocation_id: id } });
      const { version: _v, runtime: _r, attempts, ...rest } = body;
      out[id] = {
        ...rest,
        attempts: attempts
          .map(({ received_at: _x, ...a }: { received_at: string }) => a)
          .sort((a: { event_id: string }, b: { event_id: string }) => (a.event_id < b.event_id ? -1 : 1)),
      };
    }
    return out;
  }

  it("random permutations, repeats and batch cuts reach the in-order final state", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: stories.length - 1 }), { minLength: 1, maxLength: 5 }),
        fc.infiniteStream(fc.nat()),
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 20 }),
        async (picks, noise, cuts) => {
          const records = build(picks);
          const inOrder = await deliver(records.map((r) => [r]));

          const repeated = records.flatMap((r, i) => (noise.next().value % 3 === 0 || i === 0 ? [r, r] : [r]));
          const shuffled = repeated
            .map((r) => ({ r, k: noise.next().value }))
            .sort((a, b) => a.k - b.k)
            .map((x) => x.r);
          const batches: Rec[][] = [];
          for (let i = 0, c = 0; i < shuffled.length; c += 1) {
            const size = cuts[c % cuts.length]!;
            batches.push(shuffled.slice(i, i + size));
            i += size;
          }
          const scrambled = await deliver(batches);

          expect(scrambled.ids).toEqual(inOrder.ids);
          expect(await states(scrambled.key, scrambled.ids)).toEqual(await states(inOrder.key, inOrder.ids));
        },
      ),
      { numRuns: 25 },
    );
  });
});
