// Realistic ingest records for the benchmark: interleaved invocation stories
// (write-ahead intent, an outcome in one of the supported dialects, then a
// probe or a retry when the outcome calls for one). Every record carries a new
// event_id, so the load measures the accept path, not the duplicate path.

export type BenchRecord = Record<string, unknown>;

type Tool = { name: string; effect: "read" | "create" | "send" | "money" | "destructive" };

const TOOLS: Tool[] = [
  { name: "create_order", effect: "create" },
  { name: "send_email", effect: "send" },
  { name: "create_refund", effect: "money" },
  { name: "delete_file", effect: "destructive" },
  { name: "search_docs", effect: "read" },
  { name: "update_crm_contact", effect: "create" },
];

/** What the outcome asks for next in the story. */
type Follow = "none" | "probe" | "retry";
type Outcome = { envelope: BenchRecord; follow: Follow };

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MESSAGE =
  "The upstream service accepted the connection but closed it before answering; the request may or may not have been applied.";

const outcomeUnknown = (ref: string) => ({
  ok: false,
  code: "OUTCOME_UNKNOWN",
  category: "dependency",
  commit_state: "unknown",
  retry: { directive: "never", max_attempts_remaining: 0 },
  next_action: "verify_operation",
  operation_ref: ref,
  agent_message: MESSAGE,
  user_message: "We could not confirm whether your order was placed. Nothing will be retried until it is checked.",
  safe_details: { upstream: "orders-api", http_status: 504, elapsed_ms: 30012 },
});

/** Weighted outcome dialects: mostly successes, a realistic share of failures of every kind. */
const OUTCOMES: Array<[number, (ref: string, n: number) => Outcome]> = [
  [
    14,
    (ref, n) => ({
      envelope: {
        ok: true,
        commit_state: "committed",
        operation_ref: ref,
        result: { id: `ord_${n}`, total_cents: 4200 + n },
      },
      follow: "none",
    }),
  ],
  [8, (ref) => ({ envelope: outcomeUnknown(ref), follow: "probe" })],
  [
    5,
    () => ({
      envelope: {
        code: "missing_required_field",
        message: "destination is required",
        retryable: false,
        hint: "add a destination address",
        field: "destination",
      },
      follow: "none",
    }),
  ],
  [
    4,
    () => ({
      envelope: {
        code: "upstream_timeout",
        message: "timed out after 30s",
        retryable: true,
        hint: "check before retrying",
        field: null,
      },
      follow: "probe",
    }),
  ],
  [
    10,
    (_, n) => ({
      envelope: {
        outcome: "ok",
        effect_applied: "yes",
        items: [
          { item_id: `row_${n}`, applied: "yes" },
          { item_id: `row_${n + 1}`, applied: "yes" },
        ],
      },
      follow: "none",
    }),
  ],
  [
    5,
    () => ({
      envelope: {
        outcome: "retryable",
        effect_applied: "no",
        retry_after_s: 30,
        message: "rate limited by the payment provider",
      },
      follow: "retry",
    }),
  ],
  [
    3,
    (_, n) => ({
      envelope: {
        outcome: "unknown",
        effect_applied: "partial",
        items: [
          { item_id: `row_${n}`, applied: "yes" },
          { item_id: `row_${n + 1}`, applied: "unknown", reason: "timeout" },
        ],
      },
      follow: "probe",
    }),
  ],
  [
    4,
    () => ({
      envelope: {
        kind: "tool_error",
        version: 1,
        is_error: true,
        error: "invalid",
        message: "date must be in the future",
        recovery: "correct_arguments",
        recoverable: true,
      },
      follow: "none",
    }),
  ],
  [
    3,
    (_, n) => ({
      envelope: {
        status: "post_dispatch_evidence_failed",
        retryable: false,
        reconciliation_required: true,
        invocation_id: `gw-${n}`,
        message: "dispatched; the evidence write failed",
      },
      follow: "probe",
    }),
  ],
  [
    4,
    () => ({
      envelope: { type: "about:blank", title: "Bad Gateway", status: 502, detail: "upstream closed the connection" },
      follow: "probe",
    }),
  ],
  [
    3,
    () => ({
      envelope: {
        type: "https://developers.cloudflare.com/support/troubleshooting/http-status-codes/cloudflare-1xxx-errors/error-1015/",
        title: "You are being rate limited",
        status: 429,
        detail: "Rate limited.",
        error_code: 1015,
        error_name: "rate_limited",
        error_category: "rate_limit",
        retryable: true,
        retry_after: 30,
        owner_action_required: false,
      },
      follow: "retry",
    }),
  ],
  [
    3,
    () => ({
      envelope: {
        type: "https://example.net/validation-error",
        title: "Your request is not valid.",
        status: 422,
        errors: [{ detail: "must be a positive integer", pointer: "#/quantity" }],
      },
      follow: "none",
    }),
  ],
  [
    6,
    (_, n) => ({
      envelope: {
        content: [{ type: "text", text: `created invoice inv_${n}` }],
        structuredContent: { invoice_id: `inv_${n}` },
      },
      follow: "none",
    }),
  ],
  [
    3,
    () => ({
      envelope: { content: [{ type: "text", text: "Error: upstream timed out" }], isError: true },
      follow: "probe",
    }),
  ],
  [
    3,
    (ref) => ({
      envelope: { content: [{ type: "text", text: JSON.stringify(outcomeUnknown(ref)) }], isError: true },
      follow: "probe",
    }),
  ],
  [4, (_, n) => ({ envelope: { type: "tool_result", tool_use_id: `toolu_${n}`, content: "done" }, follow: "none" })],
  [
    2,
    (_, n) => ({
      envelope: {
        type: "tool_result",
        tool_use_id: `toolu_${n}`,
        is_error: true,
        content: JSON.stringify({
          kind: "tool_error",
          is_error: true,
          error: "invalid",
          recovery: "correct_arguments",
          message: "bad date",
        }),
      },
      follow: "none",
    }),
  ],
  [
    3,
    (_, n) => ({
      envelope: {
        type: "function_call_output",
        call_id: `call_${n}`,
        output: JSON.stringify({ outcome: "retryable", effect_applied: "no", retry_after_s: 30 }),
      },
      follow: "retry",
    }),
  ],
  [
    2,
    () => ({
      envelope: {
        result: "weird",
        upstream: { detail: "no known dialect" },
        request: { headers: { Authorization: "Bearer sk_live_not_a_real_key" } },
      },
      follow: "probe",
    }),
  ],
];
const OUTCOME_WEIGHT = OUTCOMES.reduce((sum, [w]) => sum + w, 0);

export type RecordStream = { next: () => BenchRecord; batch: (n: number) => BenchRecord[] };

/**
 * `prefix` must be unique per stream and per run: it scopes every event_id,
 * task_id and invocation_id, so streams never collide with each other.
 */
export function createRecordStream(prefix: string, seed = 1, openStories = 8): RecordStream {
  const rand = mulberry32(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
  let events = 0;
  let stories = 0;
  // Records of a runtime at work now, as real traffic is (an old `at` is late data, which costs more by design).
  let clock = Date.now() - 60_000;
  const open: BenchRecord[][] = [];

  const iso = () => new Date((clock += 2 + Math.floor(rand() * 20))).toISOString();

  function outcome(ref: string, n: number): Outcome {
    let roll = rand() * OUTCOME_WEIGHT;
    for (const [weight, make] of OUTCOMES) {
      roll -= weight;
      if (roll < 0) return make(ref, n);
    }
    return OUTCOMES[0]![1](ref, n);
  }

  function story(): BenchRecord[] {
    const n = stories++;
    const tool = pick(TOOLS);
    const taskId = `${prefix}-task-${Math.floor(n / 2)}`;
    const key = `${prefix}-key-${n}`;
    // A third of runtimes send no invocation_id: Settle derives it from the key.
    const identity =
      rand() < 0.33 ? { idempotency_key: key } : { invocation_id: `${prefix}-inv-${n}`, idempotency_key: key };
    const base = {
      task_id: taskId,
      ...identity,
      tool: tool.name,
      effect_class: tool.effect,
      args_digest: `sha256:${n.toString(16).padStart(64, "0")}`,
    };
    const attempt = (no: number) => [
      {
        ...base,
        attempt_id: `${taskId}-a${no}`,
        attempt: no,
        phase: "intent",
        at: iso(),
        budget_left_s: 120 - no * 30,
      },
    ];
    const result = outcome(key, n);
    const records: BenchRecord[] = [
      ...attempt(1),
      { ...base, attempt_id: `${taskId}-a1`, attempt: 1, phase: "outcome", at: iso(), envelope: result.envelope },
    ];
    if (result.follow === "probe" && rand() < 0.6) {
      const found = rand() < 0.7;
      records.push({
        ...base,
        attempt: 1,
        phase: "probe",
        at: iso(),
        envelope: found
          ? { ok: true, commit_state: "committed", operation_ref: key }
          : {
              ok: false,
              commit_state: "not_committed",
              code: "NOT_FOUND",
              category: "validation",
              next_action: "wait_and_retry",
            },
      });
    } else if (result.follow === "retry") {
      records.push(...attempt(2), {
        ...base,
        attempt_id: `${taskId}-a2`,
        attempt: 2,
        phase: "outcome",
        at: iso(),
        envelope: { outcome: "ok", effect_applied: "yes" },
      });
    } else if (rand() < 0.05) {
      // source article 002 (docs/outcome-model.md)'s own attempt log line, accepted as a record as is.
      records.push({
        task: taskId,
        call: tool.name,
        intent_key: key,
        attempt: 3,
        started: iso(),
        budget_left_s: 10,
        outcome: "ok",
        effect_applied: "yes",
        probe: "found",
      });
    }
    return records;
  }

  function next(): BenchRecord {
    while (open.length < openStories) open.push(story());
    // Interleaved like a busy runtime: the next record comes from any open story.
    const index = Math.floor(rand() * open.length);
    const current = open[index]!;
    const record = current.shift()!;
    if (current.length === 0) open.splice(index, 1);
    return { event_id: `${prefix}:${events++}`, ...record };
  }

  return { next, batch: (n) => Array.from({ length: n }, next) };
}
