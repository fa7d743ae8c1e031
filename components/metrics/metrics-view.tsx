import Link from "next/link";
import type { Metrics, MetricName, ToolRow } from "@/lib/metrics/schema";
import { MetricsCharts } from "./metrics-charts";
import { apiQuery, type MetricsParams } from "./range";

// The metrics page's body: headline numbers, charts, the per-tool table.
// Every number links to the invocations behind it (/metrics/cases).

type Props = { metrics: Metrics; params: MetricsParams; from: Date; to: Date };

const seconds = (s: number | null) => {
  if (s === null) return "—";
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} d`;
};

type CaseScope = { tool: string; runtime: string; from: Date; to: Date };

/** The numbers of one scope (the whole range, or one tool's row), each a link to the invocations behind it. */
function caseLinks({ tool, runtime, from, to }: CaseScope) {
  return function caseLink(metric: MetricName, value: string | number, label: string, danger = false) {
    return (
      <Link
        href={`/metrics/cases?${apiQuery(from, to, tool, runtime, { metric })}`}
        aria-label={`${label}: ${value}`}
        data-metric={metric}
        className={`tabular-nums underline-offset-2 hover:underline ${danger ? "font-semibold text-rose-700" : ""}`}
      >
        {value}
      </Link>
    );
  };
}

function Card({ title, children, note }: { title: string; children: React.ReactNode; note?: React.ReactNode }) {
  return (
    <section className="rounded-lg border border-slate-200 bg-white p-4">
      <h2 className="text-xs font-medium uppercase tracking-wide text-slate-500">{title}</h2>
      <div className="mt-1 text-2xl font-semibold text-slate-900">{children}</div>
      {note && <div className="mt-1 space-x-2 text-xs text-slate-600">{note}</div>}
    </section>
  );
}

export function MetricsView({ metrics: m, params, from, to }: Props) {
  const link = caseLinks({ tool: params.tool, runtime: params.runtime, from, to });
  const totalEscalations = Object.values(m.escalations_by_tool).reduce((s, n) => s + n, 0);
  return (
    <div className="space-y-6">
      <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
        <Card
          title="Duplicates prevented"
          note={
            <>
              <span>guard {link("guard_denials", m.duplicates_prevented.guard_denials, "Guard denials")}</span>
              <span>probe {link("probe_found", m.duplicates_prevented.probe_found, "Probe found")}</span>
              <span>
                receiver {link("receiver_replays", m.duplicates_prevented.receiver_replays, "Receiver replays")}
              </span>
            </>
          }
        >
          {link("duplicates_prevented", m.duplicates_prevented.total, "Duplicates prevented")}
        </Card>
        <Card title="Possible duplicate effects" note="two committed invocations with one key">
          {link(
            "possible_duplicate_effects",
            m.possible_duplicate_effects,
            "Possible duplicate effects",
            m.possible_duplicate_effects > 0,
          )}
        </Card>
        <Card
          title="Unknown outcomes"
          note={
            <>
              <span>probe {link("resolved_by_probe", m.unknown_outcomes.resolved_by_probe, "Resolved by probe")}</span>
              <span>
                verifier {link("resolved_by_verifier", m.unknown_outcomes.resolved_by_verifier, "Resolved by verifier")}
              </span>
              <span>
                operator {link("resolved_by_operator", m.unknown_outcomes.resolved_by_operator, "Resolved by operator")}
              </span>
              <span>escalated {link("escalated", m.unknown_outcomes.escalated, "Escalated")}</span>
              <span>open {link("open", m.unknown_outcomes.open, "Still open")}</span>
            </>
          }
        >
          {link("unknown_outcomes", m.unknown_outcomes.total, "Unknown outcomes")}
        </Card>
        <Card
          title="Time in pending recovery"
          note={
            <span>p90 {link("pending_recovery", seconds(m.pending_recovery_seconds.p90), "Pending recovery p90")}</span>
          }
        >
          <span className="text-base font-normal text-slate-500">p50 </span>
          {link("pending_recovery", seconds(m.pending_recovery_seconds.p50), "Pending recovery p50")}
        </Card>
        <Card title="Escalations" note="into escalated, by a person, the runtime or policy">
          {link("escalations", totalEscalations, "Escalations")}
        </Card>
        <Card
          title="Retries per invocation"
          note={<span>over {link("retries", m.invocations, "Invocations")} invocations</span>}
        >
          {link(
            "retries",
            m.retries_per_invocation === null ? "—" : m.retries_per_invocation.toFixed(2),
            "Retries per invocation",
          )}
        </Card>
        <Card
          title="Approval wait"
          note={<span>p90 {link("approval_wait", seconds(m.approval_wait_seconds.p90), "Approval wait p90")}</span>}
        >
          <span className="text-base font-normal text-slate-500">p50 </span>
          {link("approval_wait", seconds(m.approval_wait_seconds.p50), "Approval wait p50")}
        </Card>
        <Card title="SLA breaches" note="escalated by the SLA policy">
          {link("sla_breaches", m.sla_breaches, "SLA breaches", m.sla_breaches > 0)}
        </Card>
        <Card title="Settled without a person" note="share of the unknowns settled by a probe or a verifier">
          {m.unknown_outcomes.settled_without_a_person === null
            ? "—"
            : `${Math.round(m.unknown_outcomes.settled_without_a_person * 100)} %`}
        </Card>
        <Card
          title="Verifier"
          note={
            <>
              <span>
                answered {m.verifications.answers} of {m.verifications.asks} asks
              </span>
              <span>settled {m.verifications.settled}</span>
              <span>gave up {m.verifications.gave_up}</span>
            </>
          }
        >
          <span className="text-base font-normal text-slate-500">answer rate </span>
          {link(
            "verifications",
            m.verifications.answer_rate === null ? "—" : `${Math.round(m.verifications.answer_rate * 100)} %`,
            "Verification requests",
          )}
        </Card>
        <Card
          title="Possible duplicates, new key"
          note={
            <>
              <span>
                after the fact{" "}
                {link(
                  "possible_duplicates_after",
                  m.possible_duplicates.after_the_fact,
                  "Possible duplicates after the fact",
                  m.possible_duplicates.after_the_fact > 0,
                )}
              </span>
            </>
          }
        >
          <span className="text-base font-normal text-slate-500">at the guard </span>
          {link("possible_duplicates_at_guard", m.possible_duplicates.at_guard, "Possible duplicates at the guard")}
        </Card>
      </div>

      <MetricsCharts series={m.series} byTool={m.by_tool} bucket={m.bucket} />

      <ToolTable rows={m.by_tool} params={params} from={from} to={to} />
    </div>
  );
}

function ToolTable({ rows, params, from, to }: { rows: ToolRow[]; params: MetricsParams; from: Date; to: Date }) {
  const cell = (metric: MetricName, tool: string, value: string | number, label: string, danger = false) => (
    <td className="px-3 py-1.5 text-right">
      {caseLinks({ tool, runtime: params.runtime, from, to })(metric, value, `${tool} ${label}`, danger)}
    </td>
  );
  if (rows.length === 0)
    return (
      <p className="rounded-lg border border-dashed border-slate-300 p-6 text-sm text-slate-600">
        Nothing happened in this range.
      </p>
    );
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="w-full text-sm" aria-label="Per tool">
        <thead className="bg-slate-50 text-xs text-slate-600">
          <tr>
            {[
              "Tool",
              "Duplicates prevented",
              "Possible duplicates",
              "Unknown",
              "by probe",
              "by verifier",
              "by operator",
              "escalated",
              "open",
              "Recovery p50",
              "Recovery p90",
              "Escalations",
              "Invocations",
              "Retries / inv.",
              "Approval p50",
              "SLA breaches",
            ].map((h, i) => (
              <th key={h} scope="col" className={`px-3 py-2 font-medium ${i === 0 ? "text-left" : "text-right"}`}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((r) => (
            <tr key={r.tool} data-tool={r.tool}>
              <th scope="row" className="px-3 py-1.5 text-left font-mono text-xs font-normal">
                {r.tool}
              </th>
              {cell("duplicates_prevented", r.tool, r.duplicates_prevented, "duplicates prevented")}
              {cell(
                "possible_duplicate_effects",
                r.tool,
                r.possible_duplicate_effects,
                "possible duplicate effects",
                r.possible_duplicate_effects > 0,
              )}
              {cell("unknown_outcomes", r.tool, r.unknown_outcomes, "unknown outcomes")}
              {cell("resolved_by_probe", r.tool, r.resolved_by_probe, "resolved by probe")}
              {cell("resolved_by_verifier", r.tool, r.resolved_by_verifier, "resolved by verifier")}
              {cell("resolved_by_operator", r.tool, r.resolved_by_operator, "resolved by operator")}
              {cell("escalated", r.tool, r.escalated, "escalated")}
              {cell("open", r.tool, r.open, "still open")}
              {cell("pending_recovery", r.tool, seconds(r.pending_recovery_p50), "recovery p50")}
              {cell("pending_recovery", r.tool, seconds(r.pending_recovery_p90), "recovery p90")}
              {cell("escalations", r.tool, r.escalations, "escalations")}
              {cell("retries", r.tool, r.invocations, "invocations")}
              {cell(
                "retries",
                r.tool,
                r.retries_per_invocation === null ? "—" : r.retries_per_invocation.toFixed(2),
                "retries per invocation",
              )}
              {cell("approval_wait", r.tool, seconds(r.approval_wait_p50), "approval wait p50")}
              {cell("sla_breaches", r.tool, r.sla_breaches, "SLA breaches", r.sla_breaches > 0)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
