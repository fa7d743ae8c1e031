"use client";

import { useQuery } from "@tanstack/react-query";
import type { InvocationView } from "@/lib/invocations/read";
import type { VerificationView } from "@/lib/verify/view";
import { NO_VERIFIER_RUNNING, silenceLimitS } from "@/lib/outcome/verification";
import { queryKeys } from "@/lib/query/keys";
import { api } from "@/components/api";
import { formatAgo, formatClock } from "@/components/timeline/format";

// What Settle's verifier (decision 027) is doing about this call, beside the next step: an operator who must
// trust an automatic "committed" sees who answered, when, and with what evidence; one who is about to act by
// hand sees that Settle is already checking, and when it asks next.

const handedOver = (v: VerificationView) => v.answers.at(-1)?.reading === NO_VERIFIER_RUNNING;

/** While Settle waits on an ask: nobody serves the runtime's verifier (a crashed worker, a forgotten deploy). */
function nobodyServing(v: VerificationView): string | null {
  if ((v.state !== "open" && v.state !== "scheduled") || v.serving.running || v.leased_until) return null;
  const since = v.serving.last_poll_at ? `since ${formatClock(v.serving.last_poll_at)} UTC` : "yet";
  return `No verifier is running for this runtime: no worker has asked for ${v.runtime}'s verifications ${since}, and it has no webhook endpoint. Unless one asks, a person gets this call ${silenceLimitS(v.config)} s after it is due.`;
}

function headline(v: VerificationView, now: string): string {
  const tries = `try ${Math.max(v.try, 1)} of ${v.max_tries}`;
  if (v.state === "gave_up" && handedOver(v))
    return `Handed to a person: ${NO_VERIFIER_RUNNING} (no worker asked for ${v.runtime}'s verifications). The outcome is still unknown.`;
  switch (v.state) {
    case "scheduled":
      return `Settle will ask ${v.runtime}'s verifier at ${formatClock(v.next_ask_at ?? now)} UTC.`;
    case "open":
      return v.leased_until
        ? `Settle is checking (${tries}): ${v.leased_by ?? "a worker"} is looking it up.`
        : `Settle is checking (${tries}, next at ${formatClock(v.next_ask_at ?? now)} UTC, ${formatAgo(v.next_ask_at ?? now, now)}).`;
    case "settled":
      return `Settled by ${v.runtime}'s verifier on ${tries}.`;
    case "gave_up":
      return `Settle asked ${v.try === 1 ? "once" : `${v.try} times`} without a settling answer: a person decides.`;
    case "cancelled":
      return "Settle stopped asking: it was settled or moved on before the verifier answered.";
  }
}

const verdict = (found: boolean | null) =>
  found === true ? "found" : found === false ? "not found" : "could not tell";

export function VerificationPanel({ inv, now }: { inv: InvocationView; now: string }) {
  const { data } = useQuery({
    queryKey: queryKeys.invocations.verification(inv.invocation_id, inv.runtime),
    queryFn: async ({ signal }) => {
      const view = await api.get("/api/v1/invocations/{invocation_id}/verification", {
        params: { invocation_id: inv.invocation_id },
        query: { runtime: inv.runtime },
        signal,
      });
      // Settle never asked (the tool has no verifier, or the outcome is known): nothing to show.
      return view.state === "none" ? null : view;
    },
    refetchInterval: 2_000,
  });
  if (!data) return null;
  return (
    <section
      aria-labelledby="verification-heading"
      data-testid="verification-panel"
      className="space-y-2 rounded-lg border border-sky-200 bg-sky-50 p-4 text-sm"
    >
      <h2 id="verification-heading" className="font-semibold text-sky-950">
        Verifier
      </h2>
      <p className="text-sky-950">{headline(data, now)}</p>
      {nobodyServing(data) ? (
        <p className="font-semibold text-rose-700" data-testid="verifier-not-running">
          {nobodyServing(data)}
        </p>
      ) : null}
      {data.answers.length > 0 ? (
        <ol className="space-y-1 text-slate-700">
          {data.answers.map((a) => (
            <li key={`${a.try}-${a.at}`}>
              <span className="font-mono text-xs">
                {formatClock(a.at)} UTC · try {a.try}
              </span>{" "}
              <span className="font-medium">
                {a.reading === "gave up"
                  ? "gave up"
                  : a.reading === NO_VERIFIER_RUNNING
                    ? "handed to a person"
                    : verdict(a.found)}
              </span>{" "}
              <span className="text-slate-500">
                by {a.by} ({a.via})
              </span>
              {a.ref ? <span className="ml-1 font-mono text-xs">ref {a.ref}</span> : null}
              {a.evidence ? <span className="block break-words text-slate-600">{a.evidence}</span> : null}
              {!["found", "absent", "gave up", NO_VERIFIER_RUNNING].includes(a.reading) ? (
                <span className="block text-xs text-slate-500">Asked again: {a.reading}.</span>
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
