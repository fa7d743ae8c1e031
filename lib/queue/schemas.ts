import { z } from "zod";
import { commaList } from "../outcome/list-param";
import { invocationSummarySchema } from "../invocations/schemas";
import { slaSchema } from "../outcome/sla";
import { invocationStatusSchema } from "../outcome/vocabulary";
import { effectClasses, QUEUE_COUNT_LIMIT, QUEUE_IDS_LIMIT, UNCLASSIFIED } from "./filters";

// The queue's contract: its filter (as the URL and the API spell it), an item, a page and the bulk targets.

const blankToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blankToUndefined, schema.optional());
export const queueFilterSchema = z.object({
  status: optional(
    z
      .union([z.literal("all"), commaList(invocationStatusSchema)])
      .describe("Statuses, comma-separated; default: every status that needs a person; `all` includes settled ones."),
  ),
  tool: optional(z.string().trim().max(200)),
  runtime: optional(z.string().trim().max(200).describe("Runtime name.")),
  effect_class: optional(
    commaList(z.enum([...effectClasses, UNCLASSIFIED])).describe(
      "Effect classes, comma-separated; `unclassified` = none given.",
    ),
  ),
  assignee: optional(z.string().trim().max(320).describe("An email, `me`, or `none`.")),
  age: optional(
    z
      .string()
      .regex(/^\d{1,4}[mhd]$/, "use a number and m, h or d, e.g. 15m, 1h, 1d")
      .describe("Waiting at least this long, e.g. 15m, 1h, 1d."),
  ),
  q: optional(
    z
      .string()
      .trim()
      .max(512)
      .describe("Part of a task id, invocation id or idempotency key, as written (case-sensitive)."),
  ),
});
export type QueueFilters = z.infer<typeof queueFilterSchema>;

export const queueQuerySchema = queueFilterSchema.extend({
  cursor: optional(z.string().max(512)),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type QueueQuery = z.infer<typeof queueQuerySchema>;

/** The responses, for the OpenAPI document. */
export const queueItemSchema = invocationSummarySchema
  .extend({
    sla: slaSchema
      .nullable()
      .describe("Overdue, and when it escalates or its approval expires, by the policy of its effect class."),
    trace: z
      .object({ service: z.string().nullable(), trace_id: z.string() })
      .nullable()
      .describe(
        "When an OpenTelemetry span reported it and its task is the span's trace (the span named no task): the span's service.name and the trace id. null otherwise.",
      ),
  })
  .meta({ id: "QueueItem" });
export type QueueItem = z.infer<typeof queueItemSchema>;

export const queuePageSchema = z
  .object({
    items: z.array(queueItemSchema),
    next_cursor: z.string().nullable(),
    total: z
      .number()
      .int()
      .describe(
        `How many invocations the filter matches in all; when \`total_capped\`, more than this (counting stops at ${QUEUE_COUNT_LIMIT.toLocaleString("en-US")}).`,
      ),
    total_capped: z
      .boolean()
      .describe("More than `total` match: counting stopped there, so a broad filter costs no more than a narrow one."),
    as_of: z
      .string()
      .meta({ format: "date-time" })
      .describe("The time the queue was read at (ages and stalls are computed against it)."),
  })
  .meta({ id: "QueuePage" });
export const queueTargetsSchema = z
  .object({
    items: z
      .array(z.object({ invocation_id: z.string(), runtime: z.string(), version: z.number().int() }))
      .max(QUEUE_IDS_LIMIT),
    total: z.number().int().describe("How many match; when `total_capped`, more than this."),
    total_capped: z.boolean(),
    truncated: z.boolean().describe("More match than were returned (at most 5,000, in queue order)."),
  })
  .meta({ id: "QueueTargets" });
