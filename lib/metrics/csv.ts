import { toolRowSchema, type Metrics, type ToolRow } from "./schema";

// The metrics as CSV (RFC 4180, CRLF): one row per tool, then one for all
// tools, with the same columns as the console's per-tool table.

export const metricsCsvColumns = Object.keys(toolRowSchema.shape) as (keyof ToolRow)[];

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  // A leading =, +, - or @ would be a formula in a spreadsheet; tool names are the runtime's text.
  const safe = /^[=+\-@\t\r]/.test(text) && typeof value === "string" ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function metricsCsv(metrics: Metrics): { body: string; filename: string } {
  const all: ToolRow = {
    tool: "(all tools)",
    duplicates_prevented: metrics.duplicates_prevented.total,
    guard_denials: metrics.duplicates_prevented.guard_denials,
    probe_found: metrics.duplicates_prevented.probe_found,
    receiver_replays: metrics.duplicates_prevented.receiver_replays,
    possible_duplicate_effects: metrics.possible_duplicate_effects,
    unknown_outcomes: metrics.unknown_outcomes.total,
    resolved_by_probe: metrics.unknown_outcomes.resolved_by_probe,
    resolved_by_verifier: metrics.unknown_outcomes.resolved_by_verifier,
    resolved_by_operator: metrics.unknown_outcomes.resolved_by_operator,
    escalated: metrics.unknown_outcomes.escalated,
    open: metrics.unknown_outcomes.open,
    pending_recovery_p50: metrics.pending_recovery_seconds.p50,
    pending_recovery_p90: metrics.pending_recovery_seconds.p90,
    escalations: Object.values(metrics.escalations_by_tool).reduce((s, n) => s + n, 0),
    invocations: metrics.invocations,
    retries_per_invocation: metrics.retries_per_invocation,
    approval_wait_p50: metrics.approval_wait_seconds.p50,
    approval_wait_p90: metrics.approval_wait_seconds.p90,
    sla_breaches: metrics.sla_breaches,
    possible_duplicates_at_guard: metrics.possible_duplicates.at_guard,
    possible_duplicates_after: metrics.possible_duplicates.after_the_fact,
    verification_requests: metrics.verifications.requests,
    verification_asks: metrics.verifications.asks,
    verification_answers: metrics.verifications.answers,
  };
  const lines = [["from", "to", ...metricsCsvColumns].join(",")];
  for (const row of [...metrics.by_tool, all]) {
    lines.push([metrics.from, metrics.to, ...metricsCsvColumns.map((c) => row[c])].map(cell).join(","));
  }
  const stamp = (iso: string) => iso.slice(0, 16).replace(/[:T]/g, "-");
  return {
    body: lines.map((l) => `${l}\r\n`).join(""),
    filename: `settle-metrics-${stamp(metrics.from)}-to-${stamp(metrics.to)}.csv`,
  };
}
