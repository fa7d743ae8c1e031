import { CHAIN_COLUMNS, contentSql } from "../chain/entries";

// The write statement's part of the hash chain (lib/chain, decision 041): the attempts, transitions and guard
// answers it inserts, as rows numbered in one order (`ord`: attempts, then transitions, then answers), their
// content hashes (`chain_c`), and their places and predecessors' link hashes (`chain_l`) from
// settle_chain_append, which locks the runtime's chain head. It is called after the barrier (the invocations'
// locks and the created invocations), so the head is the statement's last lock and writers queue instead of
// deadlocking; the head stays locked until the statement commits, so places follow commit order.

export { CHAIN_COLUMNS };

type ChainedParts = { attempts: boolean; transitions: boolean; checks: boolean };

/** The chain columns of an insert that reads its rows through `from(…)`. */
export const CHAIN_VALUES = "chain_l.seq, chain_c.content, chain_l.prev";

const TRANSITION_FIELDS = `uid uuid, tool text, effect_class text, from_status text, to_status text, commit_state text,
  resolution_by text, not_before timestamptz, version int, at timestamptz`;
const CHECK_FIELDS = `task_id text, invocation_id text, tool text, idempotency_key text, allow boolean, reason text, at timestamptz`;

/**
 * The CTEs of the chained parts present. `param` holds each part's parameter; `attemptValues` is the SQL of an
 * attempt's typed columns from element `r`, as the insert names them.
 */
export function chainLinks(
  p: ChainedParts,
  param: Partial<Record<keyof ChainedParts, string>>,
  barrier: string | null,
  attemptValues: string,
): { ctes: string[]; from: (cte: string, alias: string) => string } {
  const ctes: string[] = [];
  const contents: string[] = [];
  let before = "0";
  const numbered = (part: string) => `jsonb_array_elements(${part}) WITH ORDINALITY AS x(r, o)`;
  if (p.attempts) {
    ctes.push(`attempt_in AS (
      SELECT x.o::int AS ord, $1::uuid AS runtime_id, (r ->> 0)::uuid AS invocation_uid, (r ->> 1)::int AS seq, ${attemptValues},
             now() AS received_at
        FROM ${numbered(param.attempts!)})`);
    contents.push(`SELECT ord, ${contentSql("attempt", (c) => `a.${c}`)} FROM attempt_in a`);
    before = `jsonb_array_length(${param.attempts})`;
  }
  if (p.transitions) {
    ctes.push(`transition_in AS (
      SELECT (${before} + x.o)::int AS ord, $1::uuid AS runtime_id, t.uid AS invocation_uid, t.tool, t.effect_class, t.from_status,
             t.to_status, t.commit_state, t.resolution_by, t.not_before, t.version, t.at, now() AS recorded_at
        FROM ${numbered(param.transitions!)}, jsonb_to_record(x.r) AS t(${TRANSITION_FIELDS}))`);
    contents.push(`SELECT ord, ${contentSql("transition", (c) => `t.${c}`)} FROM transition_in t`);
    before = `${before} + jsonb_array_length(${param.transitions})`;
  }
  if (p.checks) {
    ctes.push(`check_in AS (
      SELECT (${before} + x.o)::int AS ord, $1::uuid AS runtime_id, g.task_id, g.invocation_id, g.tool, g.idempotency_key,
             g.allow, g.reason, g.at
        FROM ${numbered(param.checks!)}, jsonb_to_record(x.r) AS g(${CHECK_FIELDS}))`);
    contents.push(`SELECT ord, ${contentSql("guard", (c) => `g.${c}`)} FROM check_in g`);
  }
  if (contents.length > 0) {
    ctes.push(`chain_c AS (SELECT * FROM (${contents.join("\n       UNION ALL ")}) AS c(ord, content))`);
    ctes.push(`chain_l AS (
      SELECT * FROM settle_chain_append($1::uuid::text, ARRAY(SELECT content FROM chain_c ORDER BY ord),
                                        ${barrier ? `(SELECT count(*) FROM ${barrier})` : "0"}))`);
  }
  return {
    ctes,
    from: (cte, alias) =>
      `${cte} ${alias} JOIN chain_c ON chain_c.ord = ${alias}.ord JOIN chain_l ON chain_l.ord = ${alias}.ord`,
  };
}
