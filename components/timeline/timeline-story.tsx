"use client";

import { useState, type ReactNode } from "react";
import type { ActionEvent, RecordEvent, Timeline, TimelineEvent } from "@/lib/invocations/timeline-builder";
import { CommitStateLabel, StatusBadge } from "@/components/status-badge";
import { Button } from "@/components/ui/button";
import { EventGlyph } from "./event-glyph";
import { entryActionName, gapText, markerText, recordSummary, recordTitle } from "./event-text";
import { ActionExtras } from "@/components/actions/action-extras";
import { formatClock, formatDateTime, formatDuration, spansDays } from "./format";

// The story, top to bottom: every event in time order with what it said, the
// waits between them, and who did what. Agent and upstream text is rendered
// as React text only: never HTML, never a link.

export const eventAnchor = (e: Pick<TimelineEvent, "key">) => `ev-${e.key.replace(":", "-")}`;

const PAGE = 150;

/** Events loaded a page at a time by the caller (the task page): `total` in all, `onMore(n)` asks for n more. */
type Paging = { total: number; onMore: (count: number) => void; loading: boolean };

type Props = {
  timeline: Pick<Timeline, "start" | "end" | "now" | "events">;
  /** Shown before each event on a task's timeline, to say which invocation it belongs to. */
  laneTag?: (e: TimelineEvent) => ReactNode;
  paging?: Paging;
  /** Where an attempt's normalized fields and envelope are shown. */
  recordHref: (e: RecordEvent) => string;
};

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <span className="whitespace-nowrap">
      <span className="text-slate-500">{label}</span> <span className="font-mono text-slate-800">{children}</span>
    </span>
  );
}

function RecordBody({ e, href, tag }: { e: RecordEvent; href: string; tag: ReactNode }) {
  const r = e.record;
  return (
    <>
      <p className="flex flex-wrap items-center gap-x-2 gap-y-1">
        {tag}
        <span className="font-medium text-slate-900">{recordTitle(e)}</span>
        {e.retry_of ? (
          <span className="rounded bg-sky-100 px-1.5 py-0.5 text-xs font-medium text-sky-900">
            ↻ retry of attempt {e.retry_of}
          </span>
        ) : null}
        {e.phase !== "intent" ? <CommitStateLabel state={r.commit_state} /> : null}
        <span className="text-sm text-slate-600">{recordSummary(e)}</span>
      </p>
      {e.phase !== "intent" ? (
        <p className="mt-1 flex flex-wrap gap-x-3 gap-y-0.5 text-xs">
          <Fact label="dialect">{r.wrapper_dialect ? `${r.wrapper_dialect} → ${r.dialect}` : r.dialect}</Fact>
          <Fact label="outcome">{r.outcome}</Fact>
          <Fact label="next">{r.next_action}</Fact>
          {r.code ? <Fact label="code">{r.code}</Fact> : null}
          {r.category ? <Fact label="category">{r.category}</Fact> : null}
          {r.dispatch_stage ? <Fact label="dispatch">{r.dispatch_stage}</Fact> : null}
          <Fact label="retry">
            {r.retry.directive}
            {r.retry.not_before ? ` after ${formatClock(r.retry.not_before)}` : ""}
          </Fact>
          {r.probe_result ? <Fact label="probe in the log line">{r.probe_result}</Fact> : null}
          {r.items.length > 0 ? <Fact label="items">{r.items.length}</Fact> : null}
        </p>
      ) : null}
      {r.user_message ? (
        <p className="mt-1 whitespace-pre-wrap break-words text-sm text-slate-700">“{r.user_message}”</p>
      ) : null}
      <a
        href={href}
        className="mt-1 inline-block text-xs font-medium text-indigo-700 underline-offset-2 hover:underline"
      >
        Normalized fields and envelope<span className="sr-only"> of {recordTitle(e).toLowerCase()}</span>
      </a>
    </>
  );
}

function ActionBody({ e, tag }: { e: ActionEvent; tag: ReactNode }) {
  return (
    <>
      <p className="flex flex-wrap items-center gap-x-2 gap-y-1">
        {tag}
        <span className="font-medium text-slate-900">{entryActionName(e.entry)}</span>
        <span className="text-sm text-slate-700">
          by <span className="font-medium">{e.entry.actor}</span>
        </span>
        {e.changed ? (
          <span className="inline-flex items-center gap-1 text-xs">
            <StatusBadge status={e.entry.from_status} /> <span aria-label="to">→</span>{" "}
            <StatusBadge status={e.entry.to_status} />
          </span>
        ) : (
          <span className="text-xs text-slate-500">status unchanged</span>
        )}
      </p>
      {e.entry.note ? (
        <p className="mt-1 whitespace-pre-wrap break-words rounded bg-slate-50 px-2 py-1 text-sm text-slate-800">
          {e.entry.note}
        </p>
      ) : null}
      <ActionExtras entry={e.entry} />
    </>
  );
}

function Row({
  e,
  previous,
  withDate,
  children,
}: {
  e: TimelineEvent;
  previous: TimelineEvent | null;
  withDate: boolean;
  children: ReactNode;
}) {
  const delta = previous ? Date.parse(e.at) - Date.parse(previous.at) : null;
  return (
    <li id={eventAnchor(e)} className="grid scroll-mt-24 grid-cols-[6.5rem_1.75rem_1fr] gap-x-2 target:bg-indigo-50">
      <div className="pt-0.5 text-right text-xs tabular-nums">
        <time dateTime={e.at} title={formatDateTime(e.at)} className="text-slate-800">
          {formatClock(e.at, withDate)}
        </time>
        {delta !== null && delta > 0 ? <div className="text-slate-500">+{formatDuration(delta)}</div> : null}
      </div>
      <div className="relative flex justify-center">
        <div aria-hidden="true" className="absolute inset-y-0 w-px bg-slate-200" />
        <span className="relative pt-0.5">
          <EventGlyph event={e} />
        </span>
      </div>
      <div className="min-w-0 pb-4">{children}</div>
    </li>
  );
}

export function TimelineStory({ timeline, laneTag, recordHref, paging }: Props) {
  const [shownHere, setShown] = useState(PAGE);
  const shown = paging ? timeline.events.length : shownHere;
  const total = paging?.total ?? timeline.events.length;
  const more = Math.min(PAGE * 4, total - shown);
  const withDate = spansDays(timeline.start, timeline.end);
  const events = timeline.events.slice(0, shown);
  const previousOf = new Map<string, TimelineEvent | null>();
  for (let i = 0, last: TimelineEvent | null = null; i < events.length; i += 1) {
    const e = events[i]!;
    if (e.kind === "gap") continue;
    previousOf.set(e.key, last);
    last = e;
  }
  const lane = (e: TimelineEvent) => (laneTag ? laneTag(e) : null);

  return (
    <>
      <ol aria-label="Timeline, oldest first" className="text-sm">
        {events.map((e) => {
          if (e.kind === "gap") {
            return (
              <li key={e.key} id={eventAnchor(e)} className="grid grid-cols-[6.5rem_1.75rem_1fr] gap-x-2">
                <div />
                <div className="flex justify-center">
                  <div
                    aria-hidden="true"
                    className={`w-0 border-l-2 border-dashed ${e.open ? "border-amber-400" : "border-slate-300"}`}
                  />
                </div>
                <p className={`pb-3 text-xs italic ${e.open ? "font-medium text-amber-900" : "text-slate-600"}`}>
                  {gapText(e, timeline.now)}
                </p>
              </li>
            );
          }
          return (
            <Row key={e.key} e={e} previous={previousOf.get(e.key) ?? null} withDate={withDate}>
              {e.kind === "record" ? <RecordBody e={e} href={recordHref(e)} tag={lane(e)} /> : null}
              {e.kind === "action" ? <ActionBody e={e} tag={lane(e)} /> : null}
              {e.kind === "marker" ? (
                <p className={`font-medium ${e.marker === "conflict" ? "text-rose-800" : "text-orange-900"}`}>
                  {lane(e)} {markerText(e)}
                </p>
              ) : null}
            </Row>
          );
        })}
      </ol>
      {total > shown ? (
        <p className="flex items-center gap-3 text-sm text-slate-600">
          Showing the first {shown} of {total} events.
          <Button disabled={paging?.loading} onClick={() => (paging ? paging.onMore(more) : setShown(shown + more))}>
            {paging?.loading ? "Loading…" : `Show ${more} more`}
          </Button>
        </p>
      ) : null}
    </>
  );
}
