import { declare, sources, type SourceName } from "./sql";

// The invocations behind one number: its source (metrics-sql.ts), newest
// event first. The hourly sources are read raw over the whole range (`$9` /
// `$10` = [from, to)); the number reads the same rows rolled up per hour.

const UNKNOWN_FATES = [
  "resolved_by_probe",
  "resolved_by_verifier",
  "resolved_by_operator",
  "escalated",
  "open",
] as const;

/** `$15` limit, `$16` offset. */
export function casesQuery(metric: string): string {
  return `${declare(["$15::int", "$16::int"])}${casesSelect(metric)}`;
}

function casesSelect(metric: string): string {
  const columns = `i.invocation_id, i.task_id, r.name AS runtime, s.tool, i.status, s.at, s.detail`;
  const page = `ORDER BY s.at DESC, i.invocation_id LIMIT $15::int OFFSET $16::int`;
  const join = `JOIN invocations i ON i.id = s.uid JOIN runtimes r ON r.id = i.runtime_id`;
  switch (metric) {
    case "guard_denials":
      return `SELECT ${columns} FROM (${sources.guard_denials}) AS s
                JOIN invocations i ON i.runtime_id = s.runtime_id AND i.invocation_id = s.ref JOIN runtimes r ON r.id = i.runtime_id ${page}`;
    case "duplicates_prevented":
      return `SELECT ${columns} FROM (
                SELECT i2.id AS uid, g.runtime_id, g.tool, g.at, 'guard denied: ' || g.detail AS detail FROM (${sources.guard_denials}) AS g
                  JOIN invocations i2 ON i2.runtime_id = g.runtime_id AND i2.invocation_id = g.ref
                UNION ALL SELECT uid, runtime_id, tool, at, detail FROM (${sources.probe_found}) AS p
                UNION ALL SELECT uid, runtime_id, tool, at, detail FROM (${sources.receiver_replays}) AS rr) AS s ${join} ${page}`;
    case "possible_duplicate_effects":
      // Every invocation of the key committed before `to`, each listed with the moment the key counted.
      return `SELECT ${columns} FROM (
                SELECT m.id AS uid, m.tool, d.at, d.detail FROM (${sources.possible_duplicate_effects}) AS d
                  JOIN invocations m ON m.runtime_id = d.runtime_id AND m.idempotency_key = d.ref
                 WHERE m.commit_state = 'committed' AND m.status_since < $2::timestamptz) AS s ${join} ${page}`;
    case "possible_duplicates_at_guard":
      return `SELECT ${columns} FROM (${sources.possible_duplicates_at_guard}) AS s
                JOIN invocations i ON i.runtime_id = s.runtime_id AND i.invocation_id = s.ref JOIN runtimes r ON r.id = i.runtime_id ${page}`;
    case "retries":
      return `SELECT ${columns} FROM (${sources.retries}) AS s ${join} WHERE s.seconds > 1 ${page}`;
    case "pending_recovery":
    case "approval_wait":
      return `SELECT i.invocation_id, i.task_id, r.name AS runtime, s.tool, i.status, s.at,
                     s.detail || ' after ' || round(s.seconds::numeric, 1) || ' s' AS detail FROM (${sources[metric]}) AS s ${join} ${page}`;
    default: {
      if ((UNKNOWN_FATES as readonly string[]).includes(metric)) {
        return `SELECT ${columns} FROM (${sources.unknown_outcomes}) AS s ${join} WHERE s.detail = '${metric}' ${page}`;
      }
      return `SELECT ${columns} FROM (${sources[metric as SourceName]}) AS s ${join} ${page}`;
    }
  }
}
