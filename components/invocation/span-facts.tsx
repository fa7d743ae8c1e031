import { taskHref } from "@/lib/invocations/links";
import { stringifyExactJson } from "@/lib/json/exact";

// What an attempt made from an OpenTelemetry span says about that span
// (lib/otlp/span-records.ts keeps it as the attempt's envelope): the
// convention it was read in, its trace (a link to the trace's task in Settle)
// and the tool call's arguments. An ended span's intent only names the span
// (it is kept whole on the outcome), so its panel says where the rest is.
// Upstream text, shown as text.

type Facts = {
  convention: string;
  traceId: string;
  spanId: string;
  service: string | null;
  callId: string | null;
  whole: boolean;
  arguments: unknown;
  status: string | null;
};

const str = (v: unknown) => (typeof v === "string" ? v : null);

/** The span facts of an attempt's envelope, or null when it did not come from a span. */
export function spanFactsOf(envelope: unknown): Facts | null {
  if (typeof envelope !== "object" || envelope === null) return null;
  const e = envelope as Record<string, unknown>;
  const otel = typeof e.otel === "object" && e.otel !== null ? (e.otel as Record<string, unknown>) : null;
  const convention = str(otel?.convention);
  const traceId = str(otel?.trace_id);
  if (!otel || !convention || !traceId) return null;
  const status =
    typeof otel.status === "object" && otel.status !== null ? str((otel.status as Record<string, unknown>).code) : null;
  return {
    convention,
    traceId,
    spanId: str(otel.span_id) ?? "",
    service: str(otel.service_name),
    callId: str(e.tool_call_id),
    whole: "arguments" in e,
    arguments: e.arguments ?? null,
    status,
  };
}

export function SpanFacts({ facts, runtime, taskId }: { facts: Facts; runtime?: string; taskId?: string }) {
  const traceIsTask = taskId === undefined || taskId === facts.traceId;
  return (
    <div className="mt-3 rounded-md border border-indigo-100 bg-indigo-50/50 p-3" data-testid="span-facts">
      <p className="text-xs font-medium text-slate-600">From an OpenTelemetry span</p>
      <dl className="mt-1 grid grid-cols-2 gap-x-6 gap-y-2 sm:grid-cols-4">
        <div className="min-w-0">
          <dt className="text-xs text-slate-500">convention</dt>
          <dd className="font-mono text-xs text-slate-900" data-testid="span-convention">
            {facts.convention}
          </dd>
        </div>
        <div className="min-w-0 sm:col-span-2">
          <dt className="text-xs text-slate-500">trace id</dt>
          <dd className="break-all font-mono text-xs text-slate-900" data-testid="span-trace-id">
            {runtime && traceIsTask ? (
              <a
                href={taskHref(facts.traceId, runtime)}
                className="text-indigo-700 hover:underline"
                title="Every tool call of this trace (the trace is the task)"
              >
                {facts.traceId}
              </a>
            ) : (
              facts.traceId
            )}
          </dd>
        </div>
        <div className="min-w-0">
          <dt className="text-xs text-slate-500">span id</dt>
          <dd className="break-all font-mono text-xs text-slate-900">{facts.spanId}</dd>
        </div>
        {facts.whole ? (
          <div className="min-w-0">
            <dt className="text-xs text-slate-500">service.name</dt>
            <dd className="break-words font-mono text-xs text-slate-900">{facts.service ?? "—"}</dd>
          </div>
        ) : null}
        <div className="min-w-0">
          <dt className="text-xs text-slate-500">tool-call id</dt>
          <dd className="break-all font-mono text-xs text-slate-900">
            {facts.callId ?? "— (derived from trace and span)"}
          </dd>
        </div>
        {facts.status ? (
          <div className="min-w-0">
            <dt className="text-xs text-slate-500">span status</dt>
            <dd className="font-mono text-xs text-slate-900">{facts.status}</dd>
          </div>
        ) : null}
      </dl>
      {facts.whole ? (
        <>
          <p className="mt-2 text-xs text-slate-500">Arguments</p>
          <pre
            className="mt-1 max-h-48 overflow-auto whitespace-pre-wrap break-all rounded bg-white p-2 font-mono text-xs text-slate-800"
            data-testid="span-arguments"
          >
            {typeof facts.arguments === "string" ? facts.arguments : stringifyExactJson(facts.arguments, 2)}
          </pre>
        </>
      ) : (
        <p className="mt-2 text-xs text-slate-500" data-testid="span-kept-on-outcome">
          The span has ended: its arguments, result, attributes and events are kept once, on its outcome record.
        </p>
      )}
    </div>
  );
}
