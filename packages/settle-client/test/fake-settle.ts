import type { FetchLike } from "../src/http.js";
import type { Decision, GuardAnswer, GuardInput, SettleRecord } from "../src/types.js";

// An in-memory stand-in for Settle's runtime API, just enough of it for the
// client's unit tests: idempotent ingest by event_id, a guard, and decisions
// derived from the last source article 002 (docs/outcome-model.md) envelope, with long polls and ETags. Faults
// can be injected per request.

type Fault = "lose_answer" | "unreachable" | "unavailable";
type Seen = { method: string; path: string; body: unknown; headers: Record<string, string> };

export type FakeSettle = {
  fetch: FetchLike;
  requests: Seen[];
  /** Accepted records, in arrival order. */
  records: SettleRecord[];
  decisions: Map<string, Decision>;
  guard: (input: GuardInput) => GuardAnswer;
  /** The next requests to `path` fail this way, in order. */
  faults: Array<{ path: string; fault: Fault }>;
  setDecision: (id: string, patch: Partial<Decision>) => void;
};

function decide(id: string, record: SettleRecord, version: number): Decision {
  const envelope = (record.envelope ?? {}) as {
    outcome?: string;
    effect_applied?: string;
    next_action?: string;
    safe_details?: { approve_as?: Record<string, unknown> };
  };
  const base = { invocation_id: id, reason: null, decided_by: null, decided_at: null, version };
  if (record.phase === "intent") return { ...base, status: "pending", decision: "wait", commit_state: "unknown" };
  if (record.phase === "probe") {
    if (envelope.effect_applied === "yes")
      return {
        ...base,
        status: "reconciled",
        decision: "do_not_retry",
        commit_state: "committed",
        decided_by: "probe",
      };
    if (envelope.effect_applied === "no")
      return {
        ...base,
        status: "reconciled",
        decision: "retry_allowed",
        commit_state: "not_committed",
        decided_by: "probe",
      };
    return { ...base, status: "escalated", decision: "wait", commit_state: "unknown" };
  }
  if (envelope.next_action === "request_approval") {
    // A person who answers at once, as in the Python fake: safe_details.approve_as, when given, is approved (those
    // arguments as the edit, or as called when empty); without it the call awaits approval.
    const approveAs = envelope.safe_details?.approve_as;
    if (approveAs === undefined)
      return { ...base, status: "awaiting_approval", decision: "wait", commit_state: "not_committed" };
    return {
      ...base,
      status: "approved",
      decision: "proceed",
      commit_state: "not_committed",
      decided_by: "ana@example.com",
      approved_arguments: Object.keys(approveAs).length > 0 ? approveAs : null,
    };
  }
  if (envelope.outcome === "ok")
    return { ...base, status: "succeeded", decision: "do_not_retry", commit_state: "committed" };
  if (envelope.outcome === "retryable")
    return { ...base, status: "retry_scheduled", decision: "retry_allowed", commit_state: "not_committed" };
  if (envelope.outcome === "permanent")
    return { ...base, status: "failed", decision: "abandon", commit_state: "not_committed" };
  return { ...base, status: "outcome_unknown", decision: "wait", commit_state: "unknown" };
}

const etagOf = (d: Decision) => `"${d.version}-${d.decision}"`;
const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

const unavailable = {
  ok: false,
  code: "DATABASE_UNAVAILABLE",
  category: "dependency",
  commit_state: "not_committed",
  retry: { directive: "after_delay", not_before: null, max_attempts_remaining: 5 },
  next_action: "wait_and_retry",
  operation_ref: "req-1",
  safe_details: {},
  agent_message: "Settle's database is unavailable; nothing was stored.",
  user_message: "Try again shortly.",
};

export function createFakeSettle(options: { holdMs?: number } = {}): FakeSettle {
  const holdMs = options.holdMs ?? 50;
  const byEventId = new Map<string, SettleRecord>();
  const fake: FakeSettle = {
    requests: [],
    records: [],
    decisions: new Map(),
    faults: [],
    guard: (input) => ({
      allow: true,
      reason: null,
      invocation_id: input.invocation_id ?? `${input.task_id}:${input.idempotency_key}`,
      attempt: 1,
    }),
    setDecision: (id, patch) => {
      const current = fake.decisions.get(id);
      if (!current) throw new Error(`no decision for ${id}`);
      fake.decisions.set(id, { ...current, version: current.version + 1, ...patch });
    },
    fetch: async (input, init) => {
      const url = new URL(input);
      // forEach, not entries(): Headers' iterators are in lib "DOM.Iterable", which the client's packages leave out.
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
      const body = typeof init?.body === "string" ? (JSON.parse(init.body) as unknown) : undefined;
      fake.requests.push({ method: init?.method ?? "GET", path: url.pathname + url.search, body, headers });
      const faultAt = fake.faults.findIndex((f) => url.pathname === f.path);
      const fault = faultAt >= 0 ? fake.faults.splice(faultAt, 1)[0]!.fault : null;
      if (fault === "unreachable") throw new TypeError("fetch failed");
      if (fault === "unavailable") return json(unavailable, 503);
      const answer = await handle(url, body, headers);
      if (fault === "lose_answer") throw new TypeError("fetch failed: socket hang up");
      return answer;
    },
  };

  async function handle(url: URL, body: unknown, headers: Record<string, string>): Promise<Response> {
    if (url.pathname === "/api/v1/envelopes") {
      const records = (body as { records: SettleRecord[] }).records;
      const results = records.map((record, index) => {
        const id = record.event_id ?? JSON.stringify(record);
        if (!record.task_id)
          return {
            index,
            status: "rejected",
            event_id: record.event_id ?? null,
            invocation_id: null,
            error: { ...unavailable, code: "MISSING_REQUIRED_FIELD", agent_message: "task_id is required" },
          };
        const invocationId = record.invocation_id ?? `${record.task_id}:${record.idempotency_key}`;
        if (byEventId.has(id)) return { index, status: "duplicate", event_id: id, invocation_id: invocationId };
        byEventId.set(id, record);
        fake.records.push(record);
        const version = (fake.decisions.get(invocationId)?.version ?? 0) + 1;
        fake.decisions.set(invocationId, decide(invocationId, record, version));
        return { index, status: "accepted", event_id: id, invocation_id: invocationId };
      });
      return json({ results }, 207);
    }
    if (url.pathname === "/api/v1/guard") return json(fake.guard(body as GuardInput));
    const match = /^\/api\/v1\/invocations\/([^/]+)\/decision$/.exec(url.pathname);
    if (match) {
      const id = decodeURIComponent(match[1]!);
      const wait = Number(url.searchParams.get("wait") ?? 0);
      const until = Date.now() + Math.min(wait * 1000, holdMs);
      for (;;) {
        const decision = fake.decisions.get(id);
        if (!decision) return json({ ...unavailable, code: "NOT_FOUND" }, 404);
        const etag = etagOf(decision);
        if (headers["if-none-match"] !== etag) return json(decision, 200, { etag });
        if (Date.now() >= until) return new Response(null, { status: 304, headers: { etag } });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    return json({ ...unavailable, code: "NOT_FOUND" }, 404);
  }

  return fake;
}
