"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import type { InvocationView } from "@/lib/invocations/read";
import { buildTimeline } from "@/lib/invocations/timeline-builder";
import { queryKeys } from "@/lib/query/keys";
import { api } from "@/components/api";
import { StatusBadge } from "@/components/status-badge";
import { formatClock } from "@/components/timeline/format";
import { TimelineChart } from "@/components/timeline/timeline-chart";
import { Breadcrumb } from "@/components/ui/page";
import { DownloadLink } from "@/components/ui/button";
import { eventAnchor, TimelineStory } from "@/components/timeline/timeline-story";
import { AttemptDetails } from "./attempt-details";
import { CallFacts } from "./call-facts";
import { AuditTrail } from "./audit-trail";
import { EarlierAttempts } from "./earlier-attempts";
import { InvocationActions } from "./invocation-actions";
import { InvocationHeader } from "./invocation-header";
import { attemptAnchor, evidenceHref, taskHref } from "@/lib/invocations/links";
import { NextStep } from "./next-step";
import { PossibleDuplicate } from "./possible-duplicate";
import { InvocationGuardRefusals } from "./guard-refusals";
import { ArgumentsCheck } from "./arguments-check";
import { ArgumentsEdit } from "./arguments-edit";
import { VerificationPanel } from "./verification-panel";
import { InvocationId } from "@/components/ui/invocation-id";

// The invocation page, kept live: the server renders it once, then the
// invocation is read again every 2 s and the whole story rebuilt from it.

type Props = { initial: InvocationView; renderedAt: string; stallWindowS: number };

export function InvocationDetail({ initial, renderedAt, stallWindowS }: Props) {
  const {
    data: inv,
    dataUpdatedAt,
    error,
  } = useQuery({
    queryKey: queryKeys.invocations.detail(initial.invocation_id, initial.runtime),
    queryFn: ({ signal }) =>
      api.get("/api/v1/invocations/{invocation_id}", {
        params: { invocation_id: initial.invocation_id },
        query: { runtime: initial.runtime },
        signal,
      }),
    initialData: initial,
    initialDataUpdatedAt: Date.parse(renderedAt),
    refetchInterval: 2_000,
  });
  const now = new Date(dataUpdatedAt).toISOString();
  const timeline = useMemo(() => buildTimeline([inv], { now: new Date(now), stallWindowS }), [inv, now, stallWindowS]);

  // Say so when the invocation changes under the operator's eyes (someone
  // else acted, a probe arrived), instead of silently swapping the page.
  const [seen, setSeen] = useState({ version: inv.version, status: inv.status });
  const [notice, setNotice] = useState<string | null>(null);
  if (inv.version !== seen.version) {
    setSeen({ version: inv.version, status: inv.status });
    setNotice(
      `Updated at ${formatClock(now)} UTC: version ${seen.version} → ${inv.version}${inv.status !== seen.status ? `, status ${seen.status} → ${inv.status}` : ""}.`,
    );
  }

  return (
    <main className="console-frame space-y-6 py-6">
      <Breadcrumb
        trail={[
          { href: "/", label: "Queue" },
          { href: taskHref(inv.task_id, inv.runtime), label: `Task ${inv.task_id}` },
        ]}
        current={<InvocationId id={inv.invocation_id} />}
      />

      <InvocationHeader inv={inv} now={now} />

      <p aria-live="polite" className="min-h-5 text-xs text-slate-500">
        {error ? (
          <span className="text-rose-700">Not refreshing: {error.message}</span>
        ) : (
          <>
            <span aria-hidden="true" className="mr-1 inline-block h-2 w-2 rounded-full bg-emerald-500" />
            Live, refreshes every 2 s.{" "}
            {notice ? (
              <span className="font-medium text-slate-800" data-testid="change-notice">
                {notice}
              </span>
            ) : null}
          </>
        )}
      </p>

      <PossibleDuplicate inv={inv} />
      <InvocationGuardRefusals refusals={inv.guard_refusals} runtime={inv.runtime} />
      <ArgumentsCheck inv={inv} />
      <VerificationPanel inv={inv} now={now} />
      <CallFacts inv={inv} />
      <ArgumentsEdit inv={inv} />

      <div className="grid gap-4 lg:grid-cols-2">
        <NextStep inv={inv} now={now} />
        <InvocationActions inv={inv} />
      </div>

      <section aria-labelledby="timeline-heading" className="space-y-4 rounded-lg border border-slate-200 bg-white p-4">
        <h2 id="timeline-heading" className="text-sm font-semibold">
          Timeline
        </h2>
        <TimelineChart
          timeline={timeline}
          hrefFor={(e) => `#${eventAnchor(e)}`}
          laneLabel={(lane) => (
            <span className="flex min-w-0 items-center gap-2">
              <span className="truncate font-mono text-xs">
                attempts 1–{Math.max(lane.invocation.attempt_count, 1)}
              </span>
              <StatusBadge status={lane.invocation.status} />
            </span>
          )}
        />
        <TimelineStory timeline={timeline} recordHref={(e) => `#${attemptAnchor(e.index)}`} />
      </section>

      <section aria-labelledby="attempts-heading" className="space-y-3">
        <h2 id="attempts-heading" className="text-sm font-semibold">
          Records, as received and as read{" "}
          <span className="font-normal text-slate-500">({inv.attempts_total.toLocaleString("en-US")})</span>
        </h2>
        {inv.attempts_total === 0 && inv.attempt_count > 0 ? (
          <p data-testid="attempts-archived" className="text-sm text-slate-600">
            Its records left retention after it settled: they are in the archive, not here (Admin → Data retention lists
            the archives; <code>settle archive restore</code> brings one back). Its outcome and the metrics that count
            it are kept; its actions and status changes stay as long as the audit trail is kept, then leave the same
            way.
          </p>
        ) : null}
        {inv.attempts_earlier ? (
          <EarlierAttempts
            invocationId={inv.invocation_id}
            runtime={inv.runtime}
            from={inv.attempts_earlier}
            shown={inv.attempts.length}
            total={inv.attempts_total}
          />
        ) : null}
        {inv.attempts.map((a, i) => (
          <AttemptDetails key={a.event_id} attempt={a} index={i} runtime={inv.runtime} taskId={inv.task_id} />
        ))}
      </section>

      <section aria-labelledby="audit-heading" className="space-y-3">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h2 id="audit-heading" className="text-sm font-semibold">
            Audit trail
          </h2>
          <DownloadLink
            href={evidenceHref(inv.invocation_id, inv.runtime)}
            size="sm"
            data-testid="download-evidence"
            title="This call's whole history as one JSON document signed with Settle's key: check it offline with settle evidence verify."
          >
            Download evidence pack
          </DownloadLink>
        </div>
        <AuditTrail actions={inv.actions} />
      </section>
    </main>
  );
}
