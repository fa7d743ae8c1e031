import { chainCtes, chainedInsert, chainedInsertSql } from "../chain/entries";

// The one INSERT of invocation_actions: every action joins its runtime's hash chain in the statement that writes
// it (lib/chain, decision 041). Writers lock the invocation first, so the chain's head is their last lock.

const COLUMNS = [
  "runtime_id",
  "id",
  "invocation_uid",
  "seq",
  "action",
  "actor",
  "at",
  "from_status",
  "to_status",
  "note",
  "payload",
] as const;

/**
 * The statement that inserts the actions `values` selects (each of COLUMNS, typed, and `ord`: their order in the
 * chain), all of the runtime `runtime` (SQL of its id).
 */
export const insertActionsSql = (values: string, runtime: string): string =>
  chainedInsertSql("action", `(${runtime})::text`, values, COLUMNS);

/** The same as the last part of a statement whose CTE `values` holds the actions. */
export const insertActionsTail = (values: string, runtime: string, returning: string): string =>
  `${chainCtes("action", `(${runtime})::text`, values)}\n    ${chainedInsert("action", values, COLUMNS, returning)}`;

/** A SELECT of one action from parameters, in COLUMNS' order after `ord` (`payload` is SQL too). */
export const oneAction = (p: {
  runtime: string;
  uid: string;
  seq: string;
  action: string;
  actor: string;
  at: string;
  from: string;
  to: string;
  note: string;
  payload: string;
}): string =>
  `SELECT 1 AS ord, ${p.runtime}::uuid AS runtime_id, gen_random_uuid() AS id, ${p.uid}::uuid AS invocation_uid,
          ${p.seq}::int AS seq, ${p.action}::text AS action, ${p.actor}::text AS actor, ${p.at}::timestamptz AS at,
          ${p.from}::text AS from_status, ${p.to}::text AS to_status, ${p.note}::text AS note, ${p.payload}::jsonb AS payload`;

/**
 * One action from parameters: $1 invocation uid, $2 seq, $3 action, $4 actor, $5 at, $6 from status, $7 to status,
 * $8 note, $9 payload (JSON text), $10 runtime id. The entry of an operator's action and of each review.
 */
export const insertOneActionSql = insertActionsSql(
  oneAction({
    runtime: "$10",
    uid: "$1",
    seq: "$2",
    action: "$3",
    actor: "$4",
    at: "$5",
    from: "$6",
    to: "$7",
    note: "$8",
    payload: "$9",
  }),
  "$10::uuid",
);
