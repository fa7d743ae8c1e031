// Records, invocations and a story printer the timeline tests build their cases from.
import type { TimelineAttempt, TimelineEvent, TimelineInvocation } from "../timeline-builder";

export const T0 = Date.parse("2026-11-29T05:12:00.000Z");
export const at = (s: number) => new Date(T0 + s * 1000).toISOString();
export const opts = (nowS: number) => ({ now: new Date(T0 + nowS * 1000), stallWindowS: 300 });

let seq = 0;
export function rec(r: Partial<TimelineAttempt> & Pick<TimelineAttempt, "phase" | "at">): TimelineAttempt {
  seq += 1;
  return {
    event_id: `e${seq}`,
    attempt_id: null,
    attempt: 1,
    received_at: r.at,
    budget_left_s: null,
    dialect: r.phase === "intent" ? "settle" : "mcp",
    wrapper_dialect: null,
    outcome: "unknown",
    commit_state: "unknown",
    code: null,
    category: null,
    retry: { directive: "never", not_before: null, max_attempts_remaining: null },
    next_action: "none",
    dispatch_stage: null,
    probe_result: null,
    safe_details: {},
    agent_message: null,
    user_message: null,
    items: [],
    envelope: null,
    args_digest: null,
    arguments: null,
    ignored: [],
    ...r,
  };
}

export function inv(p: Partial<TimelineInvocation>): TimelineInvocation {
  const attempts = p.attempts ?? [];
  return {
    invocation_id: "inv-1",
    task_id: "ord-1",
    runtime: "rt",
    tool: "create_order",
    effect_class: "create",
    idempotency_key: null,
    summary: null,
    ran_with_other_arguments: false,
    status: "outcome_unknown",
    commit_state: "unknown",
    next_action: "verify_operation",
    version: 1,
    conflict: false,
    attempt_count: 1,
    first_seen_at: attempts[0]?.at ?? at(0),
    last_attempt_at: attempts[attempts.length - 1]?.at ?? at(0),
    status_since: at(0),
    stall_at: null,
    not_before: null,
    assignee: null,
    user_message: null,
    args_digest: null,
    possible_duplicate_of: null,
    duplicate_review: null,
    arguments_review: null,
    resolution: null,
    actions: [],
    ...p,
    attempts,
  };
}

/** A call a probe found committed 20 s in, from its intent at 0 s: the records a case adds follow the intent. */
export function reconciledByProbe(p: Partial<TimelineInvocation>): TimelineInvocation {
  return inv({
    status: "reconciled",
    commit_state: "committed",
    resolution: { commit_state: "committed", by: "probe", actor: null, at: at(20), note: null },
    ...p,
    attempts: [rec({ phase: "intent", at: at(0) }), ...(p.attempts ?? [])],
  });
}

/** The story as short words, top to bottom. */
export function story(events: TimelineEvent[]): string[] {
  return events.map((e) => {
    switch (e.kind) {
      case "record":
        return `${e.phase}#${e.attempt}${e.retry_of ? ` retry-of#${e.retry_of}` : ""}${e.unanswered ? " unanswered" : ""}`;
      case "gap":
        return `gap:${e.gap} ${e.ms / 1000}s${e.open ? " open" : ""}`;
      case "action":
        return `action:${e.entry.action} ${e.entry.from_status}->${e.entry.to_status}`;
      case "marker":
        return `marker:${e.marker}`;
    }
  });
}
