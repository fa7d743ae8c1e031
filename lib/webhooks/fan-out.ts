import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import type { InvocationStatus } from "../outcome/status";
import { eventFor, type TransitionFacts, type WebhookEvent } from "./events";
import { enqueueOtlpOutcomes } from "./otlp-outcomes";

// Turns recorded status changes into outbox rows: one webhook_deliveries row
// per event per enabled endpoint of the invocation's runtime. Claiming the
// transitions with FOR UPDATE SKIP LOCKED, inserting the deliveries and
// marking the transitions fanned out happen in one transaction, so several
// instances split the work and a crash leaves nothing half done; the unique
// (endpoint_id, event_id) makes even a repeated run insert nothing twice. Webhook endpoints get the events;
// `otlp` endpoints get each settled or escalated call as a span (otlp-outcomes.ts), in the same transaction.

type Row = {
  id: string;
  invocation_uid: string;
  runtime_id: string;
  to_status: InvocationStatus;
  from_status: InvocationStatus | null;
  commit_state: string;
  resolution_by: string | null;
  not_before: string | null;
  version: number;
  at: string;
  tool: string;
  effect_class: string | null;
  invocation_id: string | null;
  task_id: string | null;
  idempotency_key: string | null;
  summary: string | null;
  runtime: string | null;
  actor: string | null;
  reason: string | null;
  prev_commit_state: string | null;
  prev_resolution_by: string | null;
  prev_not_before: string | null;
  has_previous: boolean;
};

const CLAIM = `
  SELECT t.id::text AS id, t.invocation_uid::text AS invocation_uid, t.runtime_id::text AS runtime_id,
         t.to_status, t.from_status, t.commit_state, t.resolution_by, t.not_before, t.version, t.at,
         t.tool, t.effect_class, i.invocation_id, i.task_id, i.idempotency_key, i.summary, r.name AS runtime, a.actor, a.payload->>'reason' AS reason,
         p.commit_state AS prev_commit_state, p.resolution_by AS prev_resolution_by, p.not_before AS prev_not_before,
         p.commit_state IS NOT NULL AS has_previous
    FROM invocation_transitions t
    LEFT JOIN invocations i ON i.id = t.invocation_uid
    LEFT JOIN runtimes r ON r.id = t.runtime_id
    LEFT JOIN invocation_actions a ON a.invocation_uid = t.invocation_uid AND a.seq = t.version
    LEFT JOIN LATERAL (
      SELECT commit_state, resolution_by, not_before FROM invocation_transitions
       WHERE invocation_uid = t.invocation_uid AND id < t.id ORDER BY id DESC LIMIT 1
    ) p ON true
   WHERE t.fanned_out = false
   ORDER BY t.id
   LIMIT $1
   FOR UPDATE OF t SKIP LOCKED`;

export const INSERT_DELIVERIES = `
  INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, invocation_uid, payload, status, next_attempt_at, created_at)
  SELECT gen_random_uuid(), e.id, ev.event_id, ev.event_type, ev.invocation_uid::uuid, ev.payload, 'pending', $2::timestamptz, $2::timestamptz
    FROM jsonb_to_recordset($1::jsonb) AS ev(event_id text, event_type text, invocation_uid text, runtime_id text, payload jsonb)
    JOIN webhook_endpoints e ON e.runtime_id = ev.runtime_id::uuid AND e.enabled AND e.kind = 'webhook'
  ON CONFLICT (endpoint_id, event_id) DO NOTHING
  RETURNING id`;

const dateOf = (value: string | null) => (value === null ? null : new Date(value));

function factsOf(row: Row): TransitionFacts | null {
  // The invocation or its runtime is gone (deleted with the runtime): nobody to tell.
  if (row.invocation_id === null || row.task_id === null || row.runtime === null) return null;
  return {
    id: row.id,
    invocationUid: row.invocation_uid,
    status: row.to_status,
    commitState: row.commit_state,
    resolutionBy: row.resolution_by,
    notBefore: dateOf(row.not_before),
    version: row.version,
    at: new Date(row.at),
    fromStatus: row.from_status,
    previous: row.has_previous
      ? {
          commitState: row.prev_commit_state!,
          resolutionBy: row.prev_resolution_by,
          notBefore: dateOf(row.prev_not_before),
        }
      : null,
    actor: row.actor,
    reason: row.reason,
    invocationId: row.invocation_id,
    taskId: row.task_id,
    tool: row.tool,
    effectClass: row.effect_class,
    idempotencyKey: row.idempotency_key,
    summary: row.summary,
    runtime: row.runtime,
  };
}

export type FanOutResult = { transitions: number; events: number; deliveries: number };

/**
 * Also given every claimed transition, in the fan-out's transaction: what else is told of status changes
 * (notification channels, lib/notifications) is collected exactly once, with the webhook events.
 */
export type TransitionListener = (
  tx: Pick<Sql, "query">,
  transitions: Array<TransitionFacts & { runtimeId: string }>,
  now: Date,
) => Promise<unknown>;

/** Fans out one batch; returns how many transitions it claimed (0: nothing left). */
async function fanOutBatch(db: Db, now: Date, batch: number, listener?: TransitionListener): Promise<FanOutResult> {
  return db.driver.transaction(async (tx) => {
    const rows = await tx.query<Row>(CLAIM, [batch]);
    if (rows.length === 0) return { transitions: 0, events: 0, deliveries: 0 };
    const events: Array<{ event: WebhookEvent; runtimeId: string; invocationUid: string }> = [];
    const told: Array<TransitionFacts & { runtimeId: string }> = [];
    for (const row of rows) {
      const facts = factsOf(row);
      const event = facts ? eventFor(facts, now) : null;
      if (event) events.push({ event, runtimeId: row.runtime_id, invocationUid: row.invocation_uid });
      if (facts) told.push({ ...facts, runtimeId: row.runtime_id });
    }
    if (listener) await listener(tx, told, now);
    const spans = await enqueueOtlpOutcomes(tx, told, now);
    let deliveries = 0;
    if (events.length > 0) {
      const source = events.map(({ event, runtimeId, invocationUid }) => ({
        event_id: event.id,
        event_type: event.type,
        invocation_uid: invocationUid,
        runtime_id: runtimeId,
        payload: event,
      }));
      deliveries = (await tx.query<{ id: string }>(INSERT_DELIVERIES, [JSON.stringify(source), now.toISOString()]))
        .length;
    }
    await tx.query(
      `UPDATE invocation_transitions SET fanned_out = true WHERE id = ANY($1::text[]::bigint[]) AND NOT fanned_out`,
      [rows.map((r) => r.id)],
    );
    return { transitions: rows.length, events: events.length, deliveries: deliveries + spans };
  });
}

/** Fans out everything recorded so far, `batch` transitions per transaction, at most `maxBatches` of them per run. */
export async function fanOutTransitions(
  db: Db,
  now: Date,
  options: { batch?: number; maxBatches?: number; listener?: TransitionListener } = {},
): Promise<FanOutResult> {
  const batch = options.batch ?? 200;
  const total: FanOutResult = { transitions: 0, events: 0, deliveries: 0 };
  for (let i = 0; i < (options.maxBatches ?? 50); i++) {
    const done = await fanOutBatch(db, now, batch, options.listener);
    total.transitions += done.transitions;
    total.events += done.events;
    total.deliveries += done.deliveries;
    if (done.transitions < batch) break;
  }
  return total;
}
