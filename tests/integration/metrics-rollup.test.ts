import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OperatorAction } from "@/lib/outcome/actions";
import { actOnInvocation } from "@/lib/invocations/act";
import { getMetrics } from "@/lib/metrics/metrics";
import { refreshMetricRollups } from "@/lib/metrics/rollup";
import type { Metrics } from "@/lib/metrics/schema";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { ingest } from "./routes";

// The rollups (lib/metrics/rollup.ts) must give the numbers the raw
// path gives. A generated history over three days, rolled up by the job, is
// read both ways over ranges with partial hours and filters; then data
// arrives late for the rolled-up days (a replay, a new invocation, a
// reconciliation, an earlier commit of a key already counted, a probe of a
// stalled intent): read before the job runs again and after, both must still
// agree with the raw path.

const D0 = Date.parse("2026-11-10T00:00:00Z");
const day = (minute: number) => new Date(D0 + minute * 60_000);
const at = (minute: number) => day(minute).toISOString();
const NOW = new Date(D0 + 5 * 86_400_000);
const TOOLS = ["charge_card", "send_email", "create_ticket"];
const ok = { outcome: "ok", effect_applied: "yes" };
const unknown = { outcome: "unknown", effect_applied: "unknown" };
const retryable = { outcome: "retryable", effect_applied: "no" };
const probeFound = { ok: true, commit_state: "committed", operation_ref: "r" };
const approval = {
  ok: false,
  code: "APPROVAL_REQUIRED",
  category: "authorization",
  commit_state: "not_committed",
  next_action: "request_approval",
  retry: { directive: "never", not_before: null, max_attempts_remaining: 0 },
  operation_ref: "r",
  safe_details: {},
  agent_message: "ask",
  user_message: "ask",
};

type Rec = {
  id: string;
  tool: string;
  key: string;
  minute: number;
  attempt?: number;
  phase?: string;
  envelope?: unknown;
  budget?: number;
};
type Act = { id: string; action: OperatorAction; minute: number };

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** 64 invocations of eight shapes over three days: first records, follow-ups, and operator actions. */
function generate(): { first: Rec[]; other: Rec[]; later: Rec[]; acts: Act[] } {
  const next = random(4);
  const first: Rec[] = [];
  const other: Rec[] = [];
  const later: Rec[] = [];
  const acts: Act[] = [];
  for (let n = 0; n < 64; n += 1) {
    const m = Math.floor(next() * (3 * 1440 - 180));
    const shape = n % 8;
    const id = `inv-${n}`;
    const tool = TOOLS[n % 3]!;
    // Shape 0 shares its key with the shape 0 eight before it: two committed invocations, one key.
    const key = shape === 0 ? `k-shared-${Math.floor(n / 16)}` : `k-${n}`;
    const out = n % 3 === 0 && shape !== 0 ? other : first;
    const r = (minute: number, extra: Partial<Rec> = {}): Rec => ({ id, tool, key, minute, ...extra });
    if (shape === 0) out.push(r(m, { phase: "intent" }), r(m + 1, { envelope: ok }));
    if (shape === 1) out.push(r(m, { envelope: retryable }), r(m + 2, { attempt: 2, envelope: ok }));
    if (shape === 2) out.push(r(m, { envelope: ok }), r(m + 3, { attempt: 2, envelope: ok }));
    if (shape === 3) {
      out.push(r(m, { envelope: unknown }));
      // Every other one settled in the batch that reported it: no unknown state is ever stored.
      (n % 16 === 3 ? out : later).push(r(m + 20, { phase: "probe", envelope: probeFound }));
    }
    if (shape === 4) out.push(r(m, { envelope: unknown }));
    if (shape === 4)
      acts.push({
        id,
        minute: m + 40,
        action: {
          action: "mark_reconciled",
          commit_state: n % 16 === 4 ? "committed" : "not_committed",
          note: "checked",
        },
      });
    if (shape === 5 && n % 16 === 5) out.push(r(m, { envelope: approval }));
    if (shape === 5 && n % 16 === 5) acts.push({ id, minute: m + 15, action: { action: "approve" } });
    if (shape === 5 && n % 16 === 13) out.push(r(m, { envelope: unknown }));
    if (shape === 5 && n % 16 === 13)
      acts.push({ id, minute: m + 30, action: { action: "escalate", note: "no access" } });
    if (shape === 6) out.push(r(m, { envelope: unknown }));
    if (shape === 7) out.push(r(m, { phase: "intent", budget: 60 }));
  }
  return { first, other, later, acts };
}

describe.each<Backend>(["postgres", "pglite"])("metric rollups on %s", (backend) => {
  let t: TestContext;
  let otherKey: string;

  async function send(key: string, records: Rec[]) {
    if (records.length === 0) return;
    const body = {
      records: records.map((r) => ({
        event_id: `${r.id}-${r.phase ?? "outcome"}-${r.attempt ?? 1}-${r.minute}`,
        task_id: `task-${r.id}`,
        invocation_id: r.id,
        attempt: r.attempt ?? 1,
        tool: r.tool,
        effect_class: "create",
        idempotency_key: r.key,
        phase: r.phase ?? "outcome",
        at: at(r.minute),
        ...(r.budget !== undefined ? { budget_left_s: r.budget } : {}),
        ...(r.envelope ? { envelope: r.envelope } : {}),
      })),
    };
    const res = await call(ingest, { key, body });
    expect(res.body.rejected).toBe(0);
  }

  async function act({ id, action, minute }: Act) {
    const current = await t.db.prisma.invocation.findFirstOrThrow({ where: { invocationId: id } });
    const outcome = await actOnInvocation(t.db, { invocationId: id }, action, {
      actor: "ana@example.com",
      version: current.version,
      now: new Date(at(minute)),
    });
    expect(outcome.ok).toBe(true);
  }

  const ranges = () => [
    { from: day(0), to: day(3 * 1440) },
    { from: day(317), to: day(1440 + 183) },
    { from: day(1440), to: day(1440 + 120) },
    { from: day(1810), to: day(1850) },
    { from: day(0), to: day(3 * 1440), tool: "charge_card" },
    { from: day(0), to: day(3 * 1440), runtime: "rt-two" },
    { from: day(600), to: day(2 * 1440 + 600), tool: "create_ticket", runtime: t.runtime },
  ];

  /** Every range read both ways; returns the rolled-up readings. */
  async function compareAll(): Promise<Metrics[]> {
    const read: Metrics[] = [];
    for (const range of ranges()) {
      const raw = await getMetrics(t.db, range, NOW, { rollups: false });
      const rolled = await getMetrics(t.db, range, NOW);
      expect(rolled, JSON.stringify(range)).toEqual(raw);
      read.push(rolled);
    }
    return read;
  }

  const count = async (table: string) =>
    Number((await t.db.prisma.$queryRawUnsafe<Array<{ n: bigint }>>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);

  beforeAll(async () => {
    t = await openSettle(backend);
    otherKey = (await createRuntimeKey(t.db, "rt-two")).key;
    const history = generate();
    await send(t.key, history.first);
    await send(otherKey, history.other);
    await send(
      t.key,
      history.later.filter((r) => Number(r.id.slice(4)) % 3 !== 0),
    );
    await send(
      otherKey,
      history.later.filter((r) => Number(r.id.slice(4)) % 3 === 0),
    );
    for (const a of history.acts) await act(a);
  });

  afterAll(async () => {
    await t?.teardown();
  });

  it("gives the raw numbers once rolled up, and changes late for old days read right before and after the job", async () => {
    await refreshMetricRollups(t.db);
    expect(await count("metric_hours")).toBeGreaterThan(0);
    expect(await count("metric_episodes")).toBeGreaterThan(0);
    expect(await count("metric_dirty")).toBe(0);
    const [before] = await compareAll();
    // The comparison is not of zeros: every rolled-up kind of number is there.
    expect(before!.duplicates_prevented.receiver_replays).toBeGreaterThan(0);
    expect(before!.possible_duplicate_effects).toBeGreaterThan(0);
    expect(before!.unknown_outcomes).toMatchObject({ resolved_by_probe: expect.any(Number), open: expect.any(Number) });
    for (const fate of ["resolved_by_probe", "resolved_by_operator", "escalated", "open"] as const)
      expect(before!.unknown_outcomes[fate]).toBeGreaterThan(0);
    expect(before!.pending_recovery_seconds.p50).not.toBeNull();
    expect(before!.invocations).toBe(64);

    // Late: a replay of inv-0 (day 0 or so), a new invocation first seen on day 1,
    // inv-6 reconciled, a commit of key k-shared-0 earlier than both of its
    // invocations, a probe that finds the effect of stalled inv-7.
    const inv0 = await t.db.prisma.invocation.findFirstOrThrow({ where: { invocationId: "inv-0" } });
    const m0 = (inv0.firstSeenAt.getTime() - D0) / 60_000;
    await send(t.key, [
      { id: "inv-0", tool: TOOLS[0]!, key: "k-shared-0", minute: m0 + 30, attempt: 2, envelope: ok },
      { id: "inv-late", tool: "send_email", key: "k-late", minute: 1440 + 77, envelope: unknown },
      { id: "inv-early-commit", tool: "charge_card", key: "k-shared-0", minute: 5, envelope: ok },
      { id: "inv-7", tool: TOOLS[7 % 3]!, key: "k-7", minute: 3 * 1440 - 60, phase: "probe", envelope: probeFound },
    ]);
    await act({
      id: "inv-6",
      minute: 2 * 1440 + 720,
      action: { action: "mark_reconciled", commit_state: "committed", note: "found it" },
    });
    expect(await count("metric_dirty")).toBeGreaterThan(0);

    const [noted] = await compareAll();
    expect(noted!.invocations).toBe(before!.invocations + 2);
    expect(noted!.duplicates_prevented.receiver_replays).toBe(before!.duplicates_prevented.receiver_replays + 1);

    // Two instances' jobs at once: one holds the lock, the other skips; then nothing is left noted.
    await Promise.all([refreshMetricRollups(t.db), refreshMetricRollups(t.db)]);
    await refreshMetricRollups(t.db);
    expect(await count("metric_dirty")).toBe(0);
    expect(await compareAll()).toEqual(
      await Promise.all(ranges().map((r) => getMetrics(t.db, r, NOW, { rollups: false }))),
    );
  });
});
