import "server-only";
import type { SqlDriver, Tx } from "../db/driver";
import { askingStoredStatuses } from "../outcome/verification";
import { REQUEST_COLUMNS, type RequestRow } from "./queries";

// The SQL of verifier liveness (liveness.ts): workers' polls per runtime, whether a runtime has an endpoint to
// push to, and the asks nobody served. Bound parameters only.

type Query = Pick<SqlDriver, "query"> | Tx;

/** Notes that a worker of this runtime asked for its verifications at `now` (never moves the time back). */
export async function recordVerifierPoll(q: Query, runtimeId: string, worker: string | null, now: Date) {
  await q.query(
    `INSERT INTO verifier_polls (runtime_id, polled_at, worker) VALUES ($1::uuid, $2::timestamptz, $3)
     ON CONFLICT (runtime_id) DO UPDATE SET polled_at = EXCLUDED.polled_at, worker = EXCLUDED.worker
      WHERE verifier_polls.polled_at < EXCLUDED.polled_at`,
    [runtimeId, now.toISOString(), worker],
  );
}

export type ServingRow = { runtime_id: string; polled_at: Date | null; worker: string | null; push: boolean };

/** Each runtime's last poll and whether it has an enabled webhook endpoint. */
export async function selectServing(q: Query, runtimeIds: readonly string[]): Promise<Map<string, ServingRow>> {
  if (runtimeIds.length === 0) return new Map();
  const rows = await q.query<ServingRow>(
    `SELECT r.id::text AS runtime_id, p.polled_at, p.worker,
            EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.runtime_id = r.id AND e.enabled) AS push
       FROM runtimes r LEFT JOIN verifier_polls p ON p.runtime_id = r.id
      WHERE r.id = ANY($1::uuid[])`,
    [[...new Set(runtimeIds)]],
  );
  return new Map(rows.map((r) => [r.runtime_id, r]));
}

export type UnservedRow = RequestRow & {
  created_at: Date;
  runtime: string;
  invocation_id: string;
  version: number;
  status: string;
  polled_at: Date | null;
};

// Asks due and held by nobody, of runtimes with no enabled endpoint and no poll for at least the shortest limit;
// each one's own limit (its every_s) is checked in TypeScript, by the rule in lib/outcome.
const SELECT_UNSERVED = `
  SELECT ${REQUEST_COLUMNS}, v.created_at, r.name AS runtime, i.invocation_id, i.version, i.status, p.polled_at
    FROM verification_requests v
    JOIN invocations i ON i.id = v.invocation_uid
    JOIN runtimes r ON r.id = v.runtime_id
    LEFT JOIN verifier_polls p ON p.runtime_id = v.runtime_id
   WHERE v.state IN ('scheduled', 'open') AND v.due_at <= $1::timestamptz - make_interval(secs => $2::int)
     AND v.created_at <= $1::timestamptz - make_interval(secs => $2::int)
     AND (v.leased_until IS NULL OR v.leased_until <= $1::timestamptz)
     AND (p.polled_at IS NULL OR p.polled_at <= $1::timestamptz - make_interval(secs => $2::int))
     AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.runtime_id = v.runtime_id AND e.enabled)
     AND i.status = ANY($4::text[]) AND i.attempt_count = v.attempt
   ORDER BY v.due_at LIMIT $3`;

export async function selectUnserved(q: Query, now: Date, minSilenceS: number, limit: number): Promise<UnservedRow[]> {
  return q.query<UnservedRow>(SELECT_UNSERVED, [now.toISOString(), minSilenceS, limit, askingStoredStatuses]);
}
