import { env } from "../env";
import type { OperatorAction } from "./actions";
import { deriveInvocation, type DerivedInvocation, type FoldAction, type FoldRecord } from "./fold";

// Loading what an invocation's state is folded from, and writing the result.
// Used by ingest and by operator actions, inside their transactions.

export type Sql = { $queryRawUnsafe: <T = unknown>(query: string, ...values: unknown[]) => Promise<T> };

const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));

export type RecordRow = {
  invocation_uid: string;
  event_key: string;
  seq: number;
  attempt_no: number | null;
  phase: FoldRecord["phase"];
  at: Date | string;
  outcome: FoldRecord["outcome"];
  commit_state: FoldRecord["commitState"];
  next_action: FoldRecord["nextAction"];
  not_before: Date | string | null;
  budget_left_s: number | null;
  probe_result: FoldRecord["probeResult"];
  tool: string;
  effect_class: string | null;
  idempotency_key: string | null;
  user_message: string | null;
  code: string | null;
};

export type ActionRow = { invocation_uid: string; seq: number; at: Date | string; actor: string; payload: { action: OperatorAction; quorum?: number } };

export type FoldInputs = Map<string, { records: FoldRecord[]; actions: FoldAction[] }>;

/** The two queries that load what some invocations fold from; `match` completes `WHERE invocation_uid …`. */
export function foldInputQueries(match: string): [records: string, actions: string] {
  return [
    `SELECT invocation_uid::text, event_key, seq, attempt_no, phase, at, outcome, commit_state, next_action,
            not_before, budget_left_s, probe_result, tool, effect_class, idempotency_key, user_message, code
       FROM attempts WHERE invocation_uid ${match}`,
    `SELECT invocation_uid::text, seq, at, actor, payload FROM invocation_actions
      WHERE invocation_uid ${match} AND action NOT IN ('comment')`,
  ];
}

/** Groups the rows of `foldInputQueries` by invocation; rows of other invocations are left out. */
export function toFoldInputs(uids: Iterable<string>, records: RecordRow[], actions: ActionRow[]): FoldInputs {
  const inputs: FoldInputs = new Map([...uids].map((uid) => [uid, { records: [], actions: [] }]));
  for (const r of records) {
    inputs.get(r.invocation_uid)?.records.push({
      eventKey: r.event_key,
      seq: r.seq,
      attemptNo: r.attempt_no,
      phase: r.phase,
      at: iso(r.at),
      outcome: r.outcome,
      commitState: r.commit_state,
      nextAction: r.next_action,
      notBefore: isoOrNull(r.not_before),
      budgetLeftS: r.budget_left_s,
      probeResult: r.probe_result,
      tool: r.tool,
      effectClass: r.effect_class,
      idempotencyKey: r.idempotency_key,
      userMessage: r.user_message,
      code: r.code,
    });
  }
  for (const a of actions) {
    inputs.get(a.invocation_uid)?.actions.push({ seq: a.seq, at: iso(a.at), actor: a.actor, action: a.payload.action, quorum: a.payload.quorum });
  }
  return inputs;
}

export async function loadFoldInputs(sql: Sql, uids: string[]): Promise<FoldInputs> {
  if (uids.length === 0) return new Map();
  const [recordsQuery, actionsQuery] = foldInputQueries("= ANY($1::uuid[])");
  const records = await sql.$queryRawUnsafe<RecordRow[]>(recordsQuery, uids);
  const actions = await sql.$queryRawUnsafe<ActionRow[]>(actionsQuery, uids);
  return toFoldInputs(uids, records, actions);
}

export function deriveAll(inputs: FoldInputs): Map<string, DerivedInvocation> {
  const config = { stallWindowS: env().SETTLE_STALL_WINDOW_S };
  const out = new Map<string, DerivedInvocation>();
  for (const [uid, { records, actions }] of inputs) {
    if (records.length > 0) out.set(uid, deriveInvocation(records, actions, config));
  }
  return out;
}

export type DerivedRow = { uid: string; version: number; derived: DerivedInvocation };

/** The UPDATE that writes derived state; `source` is SQL yielding the jsonb of `derivedPayload`. */
export function updateDerivedQuery(source: string): string {
  return `UPDATE invocations AS i SET
        version = x.version, tool = x.tool, effect_class = x.effect_class, idempotency_key = x.idempotency_key,
        status = x.status, commit_state = x.commit_state, next_action = x.next_action, conflict = x.conflict,
        attempt_count = x.attempt_count, first_seen_at = x.first_seen_at, last_attempt_at = x.last_attempt_at,
        status_since = x.status_since, stall_at = x.stall_at, not_before = x.not_before, assignee = x.assignee,
        user_message = x.user_message, last_code = x.last_code, resolution = x.resolution, updated_at = now()
       FROM jsonb_to_recordset(${source}) AS x(
        id uuid, version int, tool text, effect_class text, idempotency_key text, status text, commit_state text,
        next_action text, conflict boolean, attempt_count int, first_seen_at timestamptz, last_attempt_at timestamptz,
        status_since timestamptz, stall_at timestamptz, not_before timestamptz, assignee text, user_message text,
        last_code text, resolution jsonb)
      WHERE i.id = x.id
        -- Lets the planner find the rows by primary key: joined on the recordset alone, whose
        -- size it cannot know, it may scan the whole table.
        AND i.id = ANY(ARRAY(SELECT (e ->> 'id')::uuid FROM jsonb_array_elements(${source}) AS e))`;
}

export function derivedPayload(rows: DerivedRow[]): string {
  return JSON.stringify(
    rows.map(({ uid, version, derived: d }) => ({
      id: uid,
      version,
      tool: d.tool,
      effect_class: d.effectClass,
      idempotency_key: d.idempotencyKey,
      status: d.status,
      commit_state: d.commitState,
      next_action: d.nextAction,
      conflict: d.conflict,
      attempt_count: d.attemptCount,
      first_seen_at: d.firstSeenAt,
      last_attempt_at: d.lastAttemptAt,
      status_since: d.statusSince,
      stall_at: d.stallAt,
      not_before: d.notBefore,
      assignee: d.assignee,
      user_message: d.userMessage,
      last_code: d.lastCode,
      resolution: d.resolution,
    })),
  );
}

/** Writes derived state; `version` is the one each row now has. */
export async function writeDerived(sql: Sql, rows: DerivedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql.$queryRawUnsafe(updateDerivedQuery("$1::jsonb"), derivedPayload(rows));
}
