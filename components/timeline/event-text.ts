import type { GapEvent, MarkerEvent, RecordEvent, TimelineEvent } from "@/lib/invocations/timeline-builder";
import { GUARD_INTENT_PREFIX } from "@/lib/outcome/vocabulary";
import { actionMeta, type ConsoleAction } from "@/components/actions/action-meta";
import { formatClock, formatDuration } from "./format";

// What each event says, in words. Used for the story's headings and for the
// chart's tooltips, so both say the same thing.

const commitWords = {
  committed: "committed",
  not_committed: "not committed",
  unknown: "unknown",
  partial: "partial",
} as const;

// A client that asks the guard and also reports its own intent (wrapTool) leaves two intents on one attempt.
const byGuard = (e: RecordEvent) => e.record.event_id.startsWith(GUARD_INTENT_PREFIX);

export function recordTitle(e: RecordEvent): string {
  if (e.phase === "intent")
    return `Intent, attempt ${e.attempt}, ${byGuard(e) ? "from Settle's guard" : "reported by the runtime"}`;
  if (e.phase === "probe") return `Probe of attempt ${e.attempt}`;
  return `Outcome, attempt ${e.attempt}`;
}

export function recordSummary(e: RecordEvent): string {
  if (e.phase === "intent") {
    const written = byGuard(e)
      ? "the guard allowed the call and wrote its intent before dispatch"
      : "written before dispatch";
    return e.unanswered ? `${written}; no outcome was ever reported` : written;
  }
  const commit = commitWords[e.record.commit_state];
  if (e.phase === "probe") {
    return e.record.commit_state === "committed"
      ? "found: the effect exists"
      : e.record.commit_state === "not_committed"
        ? "absent: the effect does not exist"
        : `inconclusive (${commit})`;
  }
  return `commit state ${commit}`;
}

export function actionName(action: string): string {
  return action in actionMeta ? actionMeta[action as ConsoleAction].label : action;
}

/** An entry's action as the console names it: an approval that changed the arguments is "Approve with edits". */
export function entryActionName(entry: { action: string; edit?: unknown }): string {
  return entry.action === "approve" && entry.edit ? actionMeta.approve_with_edits.label : actionName(entry.action);
}

export function gapText(e: GapEvent, now: string): string {
  const duration = formatDuration(e.ms);
  if (e.gap === "before_retry") return `${duration} before attempt ${e.attempt}, a retry of the same invocation`;
  if (e.gap === "unsettled")
    return e.open ? `Unsettled for ${duration} so far: waiting for a probe or a person` : `Unsettled for ${duration}`;
  if (e.gap === "awaiting_outcome") {
    return e.stall_at && Date.parse(e.stall_at) <= Date.parse(e.until)
      ? `${duration} until the outcome, which came ${formatDuration(Date.parse(e.until) - Date.parse(e.stall_at))} after the stall window had passed`
      : `${duration} until the outcome`;
  }
  if (!e.open) return `No outcome in ${duration}, until a person acted`;
  if (!e.stall_at) return `No outcome for ${duration} so far`;
  return Date.parse(e.stall_at) <= Date.parse(now)
    ? `No outcome for ${duration}: stalled since ${formatClock(e.stall_at)} (dispatch may have happened)`
    : `Waiting ${duration} for the outcome; stalls at ${formatClock(e.stall_at)} if none comes`;
}

export function markerText(e: MarkerEvent): string {
  if (e.marker === "stalled") {
    return `Became stalled: no outcome within the ${formatDuration(e.window_s * 1000)} window after the intent at ${formatClock(e.intent_at)}. Dispatch may or may not have happened.`;
  }
  const said = e.evidence ? commitWords[e.evidence] : "something else";
  const settled = e.settled
    ? `the earlier settlement (${commitWords[e.settled.commit_state]}, by ${e.settled.by})`
    : "an earlier settlement";
  return `Conflict: this evidence says ${said}, which contradicts ${settled}. Settle re-opened the invocation for a person to decide.`;
}

/** One line for a tooltip or a screen reader. */
export function eventLabel(e: TimelineEvent, now: string): string {
  const time = formatClock(e.at);
  switch (e.kind) {
    case "record":
      return `${time} ${recordTitle(e)}: ${recordSummary(e)}${e.retry_of ? ` (retry of attempt ${e.retry_of})` : ""}`;
    case "action":
      return `${time} ${e.entry.actor}: ${entryActionName(e.entry)} (${e.entry.from_status} → ${e.entry.to_status})`;
    case "marker":
      return `${time} ${markerText(e)}`;
    case "gap":
      return `${time} ${gapText(e, now)}`;
  }
}
