import type { Sla } from "@/lib/outcome/sla";
import { formatDuration } from "@/lib/outcome/durations";

// What the policy of its effect class means for a queued invocation: overdue
// (a word and a glyph, never colour alone), and when Settle escalates it or
// its approval expires. Computed by the server at read time (`as of`).

const until = (at: string, now: string) => Math.round((Date.parse(at) - Date.parse(now)) / 1000);

function Due({ at, now, what }: { at: string; now: string; what: "escalates" | "expires" }) {
  const s = until(at, now);
  const text =
    what === "escalates"
      ? s > 0
        ? `escalates in ${formatDuration(s)}`
        : "escalating now"
      : s > 0
        ? `approval expires in ${formatDuration(s)}`
        : "approval expiring now";
  return (
    <time
      dateTime={at}
      title={`${what === "escalates" ? "Settle escalates it" : "the approval expires and is rejected"} at ${at}`}
    >
      {text}
    </time>
  );
}

export function OverdueBadge() {
  return (
    <span
      data-testid="overdue"
      className="inline-flex items-center gap-1 whitespace-nowrap rounded px-1 text-xs font-semibold text-amber-900 ring-1 ring-inset ring-amber-400"
    >
      <span aria-hidden="true">◔</span>Overdue
    </span>
  );
}

/** Compact, for a queue row: the badge and the next thing Settle will do. */
export function SlaNote({ sla, now }: { sla: Sla | null | undefined; now: string }) {
  if (!sla || (!sla.overdue && !sla.escalates_at && !sla.expires_at)) return null;
  return (
    <div className="mt-0.5 space-y-0.5 whitespace-nowrap text-[11px] text-slate-600">
      {sla.overdue ? (
        <div>
          <OverdueBadge />
        </div>
      ) : null}
      {sla.escalates_at ? (
        <div>
          <Due at={sla.escalates_at} now={now} what="escalates" />
        </div>
      ) : null}
      {sla.expires_at ? (
        <div>
          <Due at={sla.expires_at} now={now} what="expires" />
        </div>
      ) : null}
    </div>
  );
}

/** A sentence, for the invocation page. */
export function SlaSentence({ sla, now }: { sla: Sla; now: string }) {
  const policy =
    sla.policy === "*"
      ? "the default policy"
      : sla.policy === "built_in"
        ? "Settle's built-in policy"
        : `the ${sla.policy} policy`;
  const overdueIn = sla.overdue_at && !sla.overdue ? until(sla.overdue_at, now) : null;
  return (
    <span className="inline-flex flex-wrap items-center gap-x-2 gap-y-1">
      {sla.overdue ? <OverdueBadge /> : null}
      {overdueIn !== null && overdueIn > 0 ? <span>overdue in {formatDuration(overdueIn)};</span> : null}
      {sla.escalates_at ? <Due at={sla.escalates_at} now={now} what="escalates" /> : null}
      {sla.expires_at ? <Due at={sla.expires_at} now={now} what="expires" /> : null}
      <span className="text-slate-500">({policy})</span>
    </span>
  );
}
