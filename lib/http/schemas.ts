import { z } from "zod";

// The answers of routes that no domain module names. The read API's shapes
// live with their readers (lib/invocations/schemas.ts), ingest's answer with
// ingest (lib/ingest/result.ts).

const time = z.string().meta({ format: "date-time" });

export const healthSchema = z
  .object({ ok: z.literal(true), db: z.literal("up"), database: z.enum(["postgres", "pglite"]) })
  .meta({ id: "Health" });

export const livenessSchema = z.object({ ok: z.literal(true) }).meta({ id: "Liveness" });

export const readinessSchema = z
  .object({
    ready: z.literal(true),
    database: z.enum(["postgres", "pglite"]),
    migrations: z
      .number()
      .int()
      .describe("Migrations applied; none is pending, or the answer is 503 MIGRATIONS_PENDING."),
  })
  .meta({ id: "Readiness" });

// ---------------------------------------------------------------------------
// Answers several routes declare (app/api/**/route.ts); one route's own answer is declared in its file.

/** A list answer: `{ items: [...] }`. */
export const itemsOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });

export const deletedSchema = z.object({ deleted: z.literal(true) });

/** GET /api/v1/tasks/{task_id}/timeline: the events are the timeline builder's (lib/invocations), described loosely. */
export const taskStorySchema = z.object({
  start: time,
  end: time,
  now: time,
  total: z.number().int().describe("How many events the task's timeline has in all."),
  lanes: z
    .array(z.object({ invocation_id: z.string(), tool: z.string(), runtime: z.string() }))
    .describe("The invocation of each event's `lane`."),
  events: z
    .array(z.looseObject({ kind: z.string() }))
    .describe("Records without envelopes, waits, actions and markers, oldest first."),
});

export const openApiDocumentSchema = z
  .looseObject({ openapi: z.string(), info: z.object({}).loose(), paths: z.record(z.string(), z.unknown()) })
  .describe("An OpenAPI 3.1 document.");

/** A CSV download (`format=csv`). */
export const csvSchema = z.string().describe("CSV with a header row.");
