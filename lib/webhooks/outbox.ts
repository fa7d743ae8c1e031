import type { Sql } from "../db/driver";
import { INSERT_DELIVERIES } from "./fan-out";

// Events that do not come from a status change (a verification request, lib/verify) enter the same outbox:
// one delivery per enabled endpoint of the runtime, signed, retried and logged like every other event.

export type OutboxEvent = { id: string; type: string; runtimeId: string; invocationUid: string; payload: unknown };

/** Queues each event for its runtime's enabled endpoints; an event already queued is not queued twice. */
export async function enqueueEvents(q: Pick<Sql, "query">, events: readonly OutboxEvent[], now: Date): Promise<number> {
  if (events.length === 0) return 0;
  const source = events.map((e) => ({
    event_id: e.id,
    event_type: e.type,
    invocation_uid: e.invocationUid,
    runtime_id: e.runtimeId,
    payload: e.payload,
  }));
  return (await q.query<{ id: string }>(INSERT_DELIVERIES, [JSON.stringify(source), now.toISOString()])).length;
}

/** The runtimes among `runtimeIds` with at least one enabled webhook endpoint: the ones Settle pushes to. */
export async function selectRuntimesWithEndpoints(
  q: Pick<Sql, "query">,
  runtimeIds: readonly string[],
): Promise<Set<string>> {
  if (runtimeIds.length === 0) return new Set();
  const rows = await q.query<{ runtime_id: string }>(
    `SELECT DISTINCT runtime_id::text AS runtime_id FROM webhook_endpoints WHERE enabled AND kind = 'webhook' AND runtime_id = ANY($1::uuid[])`,
    [runtimeIds],
  );
  return new Set(rows.map((r) => r.runtime_id));
}
