import { z } from "zod";
import { commaList } from "../outcome/list-param";
import { approvalsSchema, slaSchema } from "../outcome/sla";
import {
  argumentEditSchema,
  duplicateReviewSchema,
  ignoredHintSchema,
  invocationStatusSchema,
} from "../outcome/vocabulary";
import { guardReasons } from "../outcome/guard-rules";
import { effectClassTextSchema, RUNTIME_NAME_MAX, TOOL_MAX } from "../outcome/record-fields";
import {
  categorySchema,
  commitStateSchema,
  dialectSchema,
  dispatchStageSchema,
  itemSchema,
  nextActionSchema,
  outcomeSchema,
  phaseSchema,
  probeResultSchema,
  retrySchema,
} from "../outcome/vocabulary";

// The public contract of the read API (docs/outcome-model.md §8): invocations, attempts and
// tasks as every reader answers them. The routes declare these shapes
// (lib/http/route.ts), and the OpenAPI document and the typed client are
// generated from those declarations.

const time = z.string().meta({ format: "date-time" });

// The guard's refusals (lib/invocations/guard-refusals.ts): a call asked again for a blocked intent, refused without a call.
const guardReason = z.enum(guardReasons);
const refusedCount = z.number().int().describe("How many times the guard refused it.");

export const guardRefusalSchema = z.object({
  reason: guardReason,
  task_id: z.string().describe("The task of the refused call."),
  idempotency_key: z.string(),
  refused: refusedCount,
  last_at: time,
});
export const taskGuardRefusalSchema = z.object({
  reason: guardReason,
  invocation_id: z.string().describe("The invocation that blocked the call."),
  idempotency_key: z.string(),
  refused: refusedCount,
  last_at: time,
});
export type GuardRefusal = z.infer<typeof guardRefusalSchema>;
export type TaskGuardRefusal = z.infer<typeof taskGuardRefusalSchema>;

export const resolutionSchema = z
  .object({
    commit_state: z.enum(["committed", "not_committed"]),
    by: z.enum(["probe", "operator"]),
    actor: z.string().nullable(),
    at: time,
    note: z.string().nullable(),
  })
  .meta({ id: "Resolution" });

export const attemptSchema = z
  .object({
    event_id: z.string(),
    attempt_id: z.string().nullable(),
    attempt: z.number().int().nullable(),
    phase: phaseSchema,
    at: time,
    received_at: time,
    budget_left_s: z
      .number()
      .int()
      .nullable()
      .describe("The record's budget_left_s: the intent's stall window, when it gave one."),
    dialect: dialectSchema,
    wrapper_dialect: dialectSchema.nullable(),
    outcome: outcomeSchema,
    commit_state: commitStateSchema,
    code: z.string().nullable(),
    category: categorySchema.nullable(),
    retry: retrySchema,
    next_action: nextActionSchema,
    dispatch_stage: dispatchStageSchema.nullable(),
    probe_result: probeResultSchema.nullable(),
    safe_details: z.record(z.string(), z.unknown()),
    agent_message: z.string().nullable(),
    user_message: z.string().nullable(),
    items: z.array(itemSchema),
    envelope: z.unknown().describe("The envelope as received, secrets redacted."),
    args_digest: z
      .string()
      .nullable()
      .describe(
        "The digest of the call's arguments: Settle's when the record carried arguments, else the one it gave.",
      ),
    arguments: z
      .unknown()
      .describe("The call's arguments as received, secrets redacted; null when the record carried none."),
    ignored: z
      .array(ignoredHintSchema)
      .describe(
        "Hints in the envelope Settle left out of its reading (a retry delay beyond what it can store, an unreadable count); the envelope keeps them.",
      ),
  })
  .meta({ id: "Attempt" });

export const actionEntrySchema = z
  .object({
    action: z.string(),
    actor: z.string(),
    at: time,
    from_status: invocationStatusSchema,
    to_status: invocationStatusSchema,
    note: z.string().nullable(),
    reply: z.string().optional().describe("The message to the agent a rejection or escalation carried."),
    edit: argumentEditSchema
      .optional()
      .describe("An approval with edited arguments: what it changed in the arguments it was given to approve."),
  })
  .meta({ id: "ActionEntry" });

export const invocationSummarySchema = z
  .object({
    invocation_id: z.string(),
    task_id: z.string(),
    runtime: z.string(),
    tool: z.string(),
    effect_class: z.string().nullable(),
    idempotency_key: z.string().nullable(),
    status: invocationStatusSchema,
    commit_state: commitStateSchema,
    next_action: nextActionSchema,
    version: z.number().int(),
    conflict: z.boolean(),
    attempt_count: z.number().int(),
    first_seen_at: time,
    last_attempt_at: time,
    status_since: time,
    stall_at: time.nullable(),
    not_before: time.nullable(),
    assignee: z.string().nullable(),
    user_message: z.string().nullable(),
    resolution: resolutionSchema.nullable(),
    args_digest: z
      .string()
      .nullable()
      .describe("The digest of its latest arguments (recorded or computed from the arguments sent)."),
    summary: z
      .string()
      .nullable()
      .describe(
        "One line of plain text saying what the call was: its tool's catalog `summary` template filled from its latest arguments (secrets redacted), else its first few scalar arguments; null: no arguments were sent.",
      ),
    ran_with_other_arguments: z
      .boolean()
      .describe(
        "After a person approved it, a record reported other arguments than those approved (compared by their digest): look before trusting the outcome.",
      ),
    possible_duplicate_of: z
      .string()
      .nullable()
      .describe(
        "The earlier invocation of the same runtime, tool and arguments, under another key, that this one may duplicate (flagged after the fact); null: none seen.",
      ),
    duplicate_review: duplicateReviewSchema
      .nullable()
      .describe(
        "Where an operator's review of the possible duplicate stands: open (in the queue as a possible duplicate effect), confirmed, dismissed; null: nothing to review.",
      ),
    arguments_review: z
      .enum(["open", "checked"])
      .nullable()
      .describe(
        "When it ran with other arguments than approved: open (in the queue, whatever its status, until a person checks what ran), checked; null: nothing to check.",
      ),
  })
  .meta({ id: "InvocationSummary" });

export const invocationSchema = invocationSummarySchema
  .extend({
    attempts: z
      .array(attemptSchema)
      .describe("In the fold's order: all of them, or the latest ones when there are more (see attempts_total)."),
    attempts_total: z
      .number()
      .int()
      .describe(
        "How many attempts the invocation has; older ones than `attempts` holds come a page at a time from GET /api/v1/invocations/{id}/attempts.",
      ),
    attempts_earlier: z
      .string()
      .nullable()
      .describe(
        "When there are older attempts: the `before` cursor of GET /api/v1/invocations/{id}/attempts for the page before `attempts`.",
      ),
    actions: z.array(actionEntrySchema),
    sla: slaSchema
      .nullable()
      .describe("What the policy of its effect class means for it now; null when no timer applies."),
    approvals: approvalsSchema.nullable().describe("While awaiting approval: who has approved and the quorum."),
    arguments_edit: z
      .object({
        state: z
          .enum(["pending", "approved"])
          .describe(
            "pending: the approvals so far are for these arguments; approved: the last approval ran with them.",
          ),
        arguments: z.record(z.string(), z.unknown()),
        digest: z.string(),
        by: z.string(),
        at: time,
      })
      .nullable()
      .describe(
        "Approve with edits: the edited arguments pending approval, else those the last approval approved (until the call asks for approval again); null: none.",
      ),
    runbook: z
      .object({
        url: z
          .string()
          .nullable()
          .describe("Its tool's runbook link for this call, every value URL-encoded; null: none."),
        host: z
          .string()
          .nullable()
          .describe("The link's host, to say where it goes (“Check in dashboard.example.com”)."),
        steps: z.string().nullable().describe("Its tool's steps for checking by hand, plain text; null: none."),
      })
      .nullable()
      .describe("Where to check the call, from its tool's catalog entry; null: the entry gives neither."),
    duplicate_refusals: z
      .array(
        z.object({
          idempotency_key: z.string(),
          task_id: z.string(),
          refused: z.number().int().describe("How many times the guard refused it."),
          last_at: time,
          cleared_by: z
            .string()
            .nullable()
            .describe("Who marked it not a duplicate (the guard then allows it); null: not cleared."),
          cleared_at: time.nullable(),
        }),
      )
      .describe(
        "Writes under other keys the guard refused as possible duplicates of this invocation (same tool and arguments), the latest first (at most 20).",
      ),
    guard_refusals: z
      .array(guardRefusalSchema)
      .describe(
        "Calls under this invocation's own key the guard refused while it blocked them (already committed, unknown, in flight), by reason and task, the latest first (at most 20).",
      ),
  })
  .meta({ id: "Invocation" });

export const attemptPageSchema = z
  .object({
    items: z.array(attemptSchema).describe("In the fold's order, oldest first: the page just before `before`."),
    total: z.number().int().describe("How many attempts the invocation has in all."),
    earlier: z
      .string()
      .nullable()
      .describe("The `before` cursor of the page before this one; null at the first attempt."),
  })
  .meta({ id: "AttemptPage" });

export const taskSchema = z
  .object({
    task_id: z.string(),
    runtime: z.string(),
    first_seen_at: time,
    last_seen_at: time,
    invocations: z.array(invocationSummarySchema),
    guard_refusals: z
      .array(taskGuardRefusalSchema)
      .describe(
        "Calls of this task the guard refused, possible duplicates included, by reason, blocking invocation and key, the latest first (at most 20).",
      ),
  })
  .meta({ id: "Task" });

export const invocationPageSchema = z
  .object({ items: z.array(invocationSummarySchema), next_cursor: z.string().nullable() })
  .meta({ id: "InvocationPage" });

export const listQuerySchema = z.object({
  status: commaList(invocationStatusSchema).optional().describe("One or more statuses, comma-separated."),
  tool: z.string().max(TOOL_MAX).optional(),
  runtime: z.string().max(RUNTIME_NAME_MAX).optional(),
  effect_class: commaList(effectClassTextSchema).optional(),
  q: z.string().trim().min(1).max(512).optional().describe("Matches task, invocation or idempotency key."),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type ListQuery = z.infer<typeof listQuerySchema>;
