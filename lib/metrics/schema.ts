import { z } from "zod";

// The shape of GET /api/v1/metrics (docs/outcome-model.md §6) and of its query. The fields SPEC
// §6 names are the contract; `by_tool`, `series`, `bucket` and `invocations`
// are added for the console's page and its CSV.

const time = z.string().meta({ format: "date-time" });
/** Every metric that counts something: a whole number. */
const count = z.number().int();
const percentiles = z
  .object({ p50: z.number().nullable(), p90: z.number().nullable() })
  .describe("Seconds; null when nothing in the range was measured.");

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A plain date is its UTC midnight; a time needs its offset. */
const instant = z
  .string()
  .trim()
  .refine((s) => (DAY.test(s) || INSTANT.test(s)) && !Number.isNaN(Date.parse(DAY.test(s) ? `${s}T00:00:00Z` : s)), {
    message: "use a date (2026-11-29) or a time with its offset (2026-11-29T05:12:04Z)",
  })
  .transform((s) => new Date(DAY.test(s) ? `${s}T00:00:00Z` : s));

const blankIsAbsent = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === "" ? undefined : v), schema.optional());

export const MAX_RANGE_DAYS = 400;

export const metricsQuerySchema = z.object({
  from: blankIsAbsent(instant).describe("Start of the range, inclusive. Default: 24 hours before `to`."),
  to: blankIsAbsent(instant).describe("End of the range, exclusive. Default: now."),
  tool: blankIsAbsent(z.string().max(200)),
  runtime: blankIsAbsent(z.string().max(200)).describe("A runtime's name."),
  format: z.enum(["json", "csv"]).default("json").describe("`csv`: one row per tool and one for all tools."),
});
export type MetricsQuery = z.infer<typeof metricsQuerySchema>;

export type MetricsRange = { from: Date; to: Date; tool: string | null; runtime: string | null };

/** Fills the defaults and checks the range; `null` with a message when it is not a range. */
export function resolveRange(
  query: Pick<MetricsQuery, "from" | "to" | "tool" | "runtime">,
  now: Date,
): MetricsRange | string {
  const to = query.to ?? now;
  const from = query.from ?? new Date(to.getTime() - 86_400_000);
  if (from.getTime() >= to.getTime()) return "`from` must be before `to`.";
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 86_400_000)
    return `The range may span at most ${MAX_RANGE_DAYS} days.`;
  return { from, to, tool: query.tool ?? null, runtime: query.runtime ?? null };
}

/** One tool's numbers; its key order is also the CSV export's column order. */
export const toolRowSchema = z.object({
  tool: z.string(),
  duplicates_prevented: count,
  guard_denials: count,
  probe_found: count,
  receiver_replays: count,
  possible_duplicate_effects: count,
  unknown_outcomes: count,
  resolved_by_probe: count,
  resolved_by_verifier: count,
  resolved_by_operator: count,
  escalated: count,
  open: count,
  pending_recovery_p50: z.number().nullable(),
  pending_recovery_p90: z.number().nullable(),
  escalations: count,
  invocations: count,
  retries_per_invocation: z.number().nullable(),
  approval_wait_p50: z.number().nullable(),
  approval_wait_p90: z.number().nullable(),
  sla_breaches: count,
  possible_duplicates_at_guard: count,
  possible_duplicates_after: count,
  verification_requests: count,
  verification_asks: count,
  verification_answers: count,
});
export type ToolRow = z.infer<typeof toolRowSchema>;

const seriesPointSchema = z.object({
  at: time.describe("Start of the bucket."),
  guard_denials: count,
  probe_found: count,
  receiver_replays: count,
  unknown_outcomes: count,
  escalations: count,
  sla_breaches: count,
  queue_size_max: count
    .nullable()
    .describe("Largest sampled queue (all matching runtimes together); null without samples."),
  queue_size_avg: z.number().nullable(),
});
export type SeriesPoint = z.infer<typeof seriesPointSchema>;

export const metricsSchema = z
  .object({
    from: time,
    to: time,
    duplicates_prevented: z.object({
      total: count,
      guard_denials: count.describe("POST /api/v1/guard answers with allow: false."),
      probe_found: count.describe(
        "Probes that found the effect: the invocation became reconciled as committed by probe.",
      ),
      receiver_replays: count.describe(
        "A committed outcome for an attempt after an earlier attempt of the same invocation was already committed: the receiver recognised the key and returned the original result (source article 002 (docs/outcome-model.md) fixture 2).",
      ),
    }),
    possible_duplicate_effects: count.describe(
      "(runtime, idempotency key) pairs with two or more committed invocations, counted when the second one committed.",
    ),
    unknown_outcomes: z.object({
      total: count,
      resolved_by_probe: count.describe("Settled by the runtime's own probe or a later outcome record."),
      resolved_by_verifier: count.describe(
        "Settled by the answer of the runtime's verifier to Settle's ask (decision 027).",
      ),
      resolved_by_operator: count,
      escalated: count,
      open: count,
      settled_without_a_person: z
        .number()
        .nullable()
        .describe("Share (0–1) of the unknowns in the range settled by a probe or a verifier; null without unknowns."),
    }),
    possible_duplicates: z
      .object({
        at_guard: count.describe("Writes under a new idempotency key the guard refused as possible_duplicate."),
        after_the_fact: count.describe(
          "Invocations first seen in the range that were flagged a possible duplicate of an earlier one.",
        ),
      })
      .describe("Duplicates the idempotency key could not catch: same runtime, tool and arguments (decision 028)."),
    verifications: z
      .object({
        requests: count.describe("Invocations Settle asked a runtime's verifier about (requests made in the range)."),
        asks: count.describe("Asks made of them (each lease or push is one)."),
        answers: count.describe("Asks a verifier answered, whatever it said."),
        answer_rate: z.number().nullable().describe("answers / asks; null without asks."),
        settled: count,
        gave_up: count.describe("Requests that ran out of tries: a person decided."),
      })
      .describe("Settle's asks of the runtimes' verifiers (decision 027)."),
    pending_recovery_seconds: percentiles,
    escalations_by_tool: z.record(z.string(), count),
    retries_per_invocation: z.number().nullable(),
    approval_wait_seconds: percentiles,
    sla_breaches: count,
    invocations: count.describe("Invocations first seen in the range (the denominator of retries_per_invocation)."),
    bucket: z.enum(["hour", "day"]),
    by_tool: z.array(toolRowSchema),
    series: z.array(seriesPointSchema),
  })
  .meta({ id: "Metrics" });
export type Metrics = z.infer<typeof metricsSchema>;

/** The numbers a case list exists for: each one names the invocations behind a number. */
export const metricNames = [
  "duplicates_prevented",
  "guard_denials",
  "probe_found",
  "receiver_replays",
  "possible_duplicate_effects",
  "unknown_outcomes",
  "resolved_by_probe",
  "resolved_by_verifier",
  "resolved_by_operator",
  "escalated",
  "open",
  "possible_duplicates_at_guard",
  "possible_duplicates_after",
  "verifications",
  "pending_recovery",
  "escalations",
  "retries",
  "approval_wait",
  "sla_breaches",
] as const;
export type MetricName = (typeof metricNames)[number];

export const metricCasesQuerySchema = metricsQuerySchema.omit({ format: true }).extend({
  metric: z.enum(metricNames),
  cursor: blankIsAbsent(z.string().regex(/^\d{1,7}$/, "a cursor from a previous page")),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export type MetricCasesQuery = z.infer<typeof metricCasesQuerySchema>;

export const metricCaseSchema = z
  .object({
    invocation_id: z.string(),
    task_id: z.string(),
    runtime: z.string(),
    tool: z.string(),
    status: z.string().describe("The invocation's stored status now (pending may read as stalled on its page)."),
    at: time.describe("When the counted event happened."),
    detail: z.string().nullable().describe("What was counted, e.g. the guard's reason or a duration."),
  })
  .meta({ id: "MetricCase" });
export type MetricCase = z.infer<typeof metricCaseSchema>;

export const metricCasesPageSchema = z
  .object({
    metric: z.enum(metricNames),
    items: z.array(metricCaseSchema),
    next_cursor: z.string().nullable(),
    retired_before: time
      .nullable()
      .describe(
        "Set when the range starts before records that have left retention (archived, docs/operations.md): cases before this moment may be missing from the list, though the number still counts them.",
      ),
  })
  .meta({ id: "MetricCasesPage" });
export type MetricCasesPage = z.infer<typeof metricCasesPageSchema>;
