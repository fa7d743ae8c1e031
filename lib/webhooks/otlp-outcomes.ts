import { createHash } from "node:crypto";
import type { Sql } from "../db/driver";
import { publicUrl } from "../env";
import { invocationHref } from "../invocations/links";
import { decideFor } from "../outcome/decisions";
import { resolutionOf, settledStatuses, type TransitionFacts } from "./events";

// Outcomes back into the team's traces (issue 41 §3, docs/audit.md "Outcomes in your traces"): each settled or
// escalated call of a runtime with an `otlp` endpoint becomes one outbox delivery, sent as an OTLP span
// (otlp-span.ts) with the same retries and log as every webhook. Decided here, in the fan-out's transaction,
// from the transition's own facts, so a late or repeated send says what was true then.

export const OTLP_EVENT_TYPE = "otlp.outcome";

/** What an `otlp.outcome` delivery holds: the span's facts, fixed when it was queued. */
export type OtlpOutcome = {
  event_id: string;
  outcome: "settled" | "escalated";
  at: string;
  invocation_id: string;
  invocation_uid: string;
  task_id: string;
  runtime: string;
  tool: string;
  effect_class: string | null;
  status: string;
  commit_state: string;
  resolution_by: string;
  decision: string;
  reason: string;
  console_url: string;
  /** The call's own trace and span, when it came from OTLP or its records carried them (hex). */
  trace_id: string | null;
  span_id: string | null;
};

const INSERT_OTLP = `
  INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, invocation_uid, payload, status, next_attempt_at, created_at)
  SELECT gen_random_uuid(), e.id, ev.event_id, '${OTLP_EVENT_TYPE}', ev.invocation_uid::uuid, ev.payload, 'pending', $2::timestamptz, $2::timestamptz
    FROM jsonb_to_recordset($1::jsonb) AS ev(event_id text, invocation_uid text, runtime_id text, payload jsonb)
    JOIN webhook_endpoints e ON e.runtime_id = ev.runtime_id::uuid AND e.enabled AND e.kind = 'otlp'
  ON CONFLICT (endpoint_id, event_id) DO NOTHING
  RETURNING id`;

// The latest record of each call that names a trace: OTLP ingest keeps it in safe_details
// (lib/otlp/span-records.ts); a runtime's own envelope may carry otel.trace_id or trace_id.
const TRACE_IDS = `
  SELECT DISTINCT ON (a.invocation_uid) a.invocation_uid::text AS uid,
         coalesce(a.safe_details->>'otel.trace_id', a.envelope->'otel'->>'trace_id', a.envelope->>'trace_id') AS trace_id,
         coalesce(a.safe_details->>'otel.span_id', a.envelope->'otel'->>'span_id', a.envelope->>'span_id') AS span_id
    FROM unnest($1::uuid[], $2::uuid[]) AS c(runtime_id, uid)
    JOIN attempts a ON a.runtime_id = c.runtime_id AND a.invocation_uid = c.uid
   WHERE coalesce(a.safe_details->>'otel.trace_id', a.envelope->'otel'->>'trace_id', a.envelope->>'trace_id') IS NOT NULL
   ORDER BY a.invocation_uid, a.received_at DESC`;

const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;
const SPAN_ID = /^(?!0{16})[0-9a-f]{16}$/;

function outcomeOf(facts: TransitionFacts): OtlpOutcome["outcome"] | null {
  if (settledStatuses.includes(facts.status)) return "settled";
  return facts.status === "escalated" ? "escalated" : null;
}

/** Who decided this state, in settle.resolution_by's words. */
function resolutionBy(facts: TransitionFacts): string {
  if (facts.resolutionBy) return facts.resolutionBy;
  if (facts.actor) return facts.actor === "system" ? "system" : "operator";
  return "runtime";
}

/** Queues an OTLP span for each settled or escalated call of a runtime with an enabled `otlp` endpoint. */
export async function enqueueOtlpOutcomes(
  tx: Pick<Sql, "query">,
  told: ReadonlyArray<TransitionFacts & { runtimeId: string }>,
  now: Date,
): Promise<number> {
  const candidates = told.filter((f) => outcomeOf(f) !== null);
  if (candidates.length === 0) return 0;
  const runtimes = await tx.query<{ runtime_id: string }>(
    `SELECT DISTINCT runtime_id::text AS runtime_id FROM webhook_endpoints WHERE enabled AND kind = 'otlp' AND runtime_id = ANY($1::uuid[])`,
    [[...new Set(candidates.map((f) => f.runtimeId))]],
  );
  const pushed = new Set(runtimes.map((r) => r.runtime_id));
  const due = candidates.filter((f) => pushed.has(f.runtimeId));
  if (due.length === 0) return 0;
  const traces = await tx.query<{ uid: string; trace_id: string | null; span_id: string | null }>(TRACE_IDS, [
    due.map((f) => f.runtimeId),
    due.map((f) => f.invocationUid),
  ]);
  const traceOf = new Map(traces.map((t) => [t.uid, t]));
  const source = due.map((facts) => {
    const trace = traceOf.get(facts.invocationUid);
    const traceId = trace?.trace_id?.toLowerCase() ?? null;
    const spanId = trace?.span_id?.toLowerCase() ?? null;
    const known = traceId !== null && TRACE_ID.test(traceId);
    const decision = decideFor(
      {
        status: facts.status,
        commitState: facts.commitState,
        notBefore: facts.notBefore,
        resolution: resolutionOf(facts.commitState, facts.resolutionBy, facts.at),
      },
      facts.at,
    );
    const eventId = `otlp_${facts.invocationUid.replaceAll("-", "")}_${facts.id}`;
    const payload: OtlpOutcome = {
      event_id: eventId,
      outcome: outcomeOf(facts)!,
      at: facts.at.toISOString(),
      invocation_id: facts.invocationId,
      invocation_uid: facts.invocationUid,
      task_id: facts.taskId,
      runtime: facts.runtime,
      tool: facts.tool,
      effect_class: facts.effectClass,
      status: facts.status,
      commit_state: facts.commitState,
      resolution_by: resolutionBy(facts),
      decision: decision.decision,
      reason: decision.reason,
      console_url: `${publicUrl()}${invocationHref(facts.invocationId, facts.runtime)}`,
      trace_id: known ? traceId : null,
      span_id: known && spanId !== null && SPAN_ID.test(spanId) ? spanId : null,
    };
    return { event_id: eventId, invocation_uid: facts.invocationUid, runtime_id: facts.runtimeId, payload };
  });
  return (await tx.query<{ id: string }>(INSERT_OTLP, [JSON.stringify(source), now.toISOString()])).length;
}

/** A stable id from text: the same outcome always gets the same span (and a call its one trace). */
export function hexId(text: string, length: 16 | 32): string {
  return createHash("sha256").update(text).digest("hex").slice(0, length);
}
