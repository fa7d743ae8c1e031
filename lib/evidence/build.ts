import type { InvocationRow } from "../invocations/rows";
import { decideFor } from "../outcome/decisions";
import type { Resolution } from "../outcome/lifecycle";
import type { InvocationStatus } from "../outcome/status";
import { digestOf } from "./canonical";
import { linkHash } from "../chain/link";
import { CHAINED_SECTIONS, PACK_SECTIONS, type ChainLink, type PackBody, type PackSection } from "./format";
import type { HistoryRows, Raw } from "./queries";

// An invocation's history as a pack's body (docs/audit.md "What a pack contains"). Pure: the rows in, the
// document out; every value as stored (arguments and envelopes were redacted when they arrived).

const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v);
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function attemptOf(a: Raw) {
  return {
    event_key: a.event_key,
    event_id: a.event_id ?? null,
    seq: num(a.seq),
    attempt_id: a.attempt_id ?? null,
    attempt: num(a.attempt_no),
    phase: a.phase,
    at: iso(a.at),
    received_at: iso(a.received_at),
    tool: a.tool,
    effect_class: a.effect_class ?? null,
    idempotency_key: a.idempotency_key ?? null,
    budget_left_s: num(a.budget_left_s),
    args_digest: a.args_digest ?? null,
    arguments: a.arguments ?? null,
    summary: a.summary ?? null,
    dialect: a.dialect,
    wrapper_dialect: a.wrapper_dialect ?? null,
    outcome: a.outcome,
    commit_state: a.commit_state,
    code: a.code ?? null,
    category: a.category ?? null,
    retry: {
      directive: a.retry_directive,
      not_before: iso(a.not_before),
      max_attempts_remaining: num(a.max_attempts_remaining),
    },
    next_action: a.next_action,
    dispatch_stage: a.dispatch_stage ?? null,
    probe_result: a.probe_result ?? null,
    safe_details: a.safe_details ?? {},
    agent_message: a.agent_message ?? null,
    user_message: a.user_message ?? null,
    items: a.items ?? [],
    envelope: a.envelope ?? null,
    ignored: a.ignored ?? null,
  };
}

const transitionOf = (t: Raw) => ({
  id: String(t.id),
  tool: t.tool,
  effect_class: t.effect_class ?? null,
  from_status: t.from_status ?? null,
  to_status: t.to_status,
  commit_state: t.commit_state,
  resolution_by: t.resolution_by ?? null,
  not_before: iso(t.not_before),
  version: num(t.version),
  at: iso(t.at),
  recorded_at: iso(t.recorded_at),
});

const actionOf = (a: Raw) => ({
  seq: num(a.seq),
  action: a.action,
  actor: a.actor,
  at: iso(a.at),
  from_status: a.from_status,
  to_status: a.to_status,
  note: a.note ?? null,
  payload: a.payload ?? {},
});

const guardRefusalOf = (g: Raw) => ({
  id: String(g.id),
  task_id: g.task_id,
  invocation_id: g.invocation_id,
  tool: g.tool,
  idempotency_key: g.idempotency_key,
  allow: g.allow,
  reason: g.reason ?? null,
  at: iso(g.at),
});

const verificationOf = (v: Raw) => ({
  id: String(v.id),
  attempt: num(v.attempt),
  state: v.state,
  tries: num(v.tries),
  config: v.config,
  due_at: iso(v.due_at),
  first_dispatched_at: iso(v.first_dispatched_at),
  answers: v.answers ?? [],
  created_at: iso(v.created_at),
  updated_at: iso(v.updated_at),
});

/**
 * Who approved, when, and the arguments digest they approved: the approval's own record of it, or (approvals
 * from before it was recorded) the digest of the latest attempt that had arrived when it was given.
 */
function approvalsOf(actions: ReturnType<typeof actionOf>[], attempts: ReturnType<typeof attemptOf>[]) {
  return actions
    .filter((a) => a.action === "approve")
    .map((a) => {
      const payload = a.payload as Record<string, unknown>;
      const recorded = "args_digest" in payload;
      const earlier = attempts.filter((x) => x.args_digest && x.received_at !== null && x.received_at <= a.at!);
      return {
        actor: a.actor,
        at: a.at,
        seq: a.seq,
        args_digest: recorded ? (payload.args_digest ?? null) : (earlier.at(-1)?.args_digest ?? null),
        args_digest_from: recorded ? "approval" : "latest_attempt_before",
        quorum: payload.quorum ?? null,
        note: a.note,
      };
    });
}

/** Each chained entry's link, as its row carries it; the entries of no chain listed apart. */
function chainOf(history: HistoryRows, runtimeId: string): PackBody["chain"] {
  const links: ChainLink[] = [];
  const unchained: string[] = [];
  for (const section of Object.keys(CHAINED_SECTIONS) as Array<keyof typeof CHAINED_SECTIONS>) {
    history[section].forEach((r, i) => {
      const entry = `${section}/${i}`;
      if (r.chain_seq === null || r.chain_seq === undefined) return void unchained.push(entry);
      const content = String(r.chain_content);
      const prev = String(r.chain_prev);
      const hash = linkHash(Buffer.from(prev, "hex"), Buffer.from(content, "hex")).toString("hex");
      links.push({
        entry,
        chain: runtimeId,
        seq: Number(r.chain_seq),
        content: String(r.chain_canonical),
        content_sha256: content,
        prev,
        hash,
      });
    });
  }
  return links.length > 0 ? { links, unchained } : null;
}

export type PackInput = { row: InvocationRow; history: HistoryRows; issuedAt: Date; issuerUrl: string };

export function buildPackBody({ row, history, issuedAt, issuerUrl }: PackInput): PackBody {
  const attempts = history.attempts.map(attemptOf);
  const actions = history.actions.map(actionOf);
  const lists = {
    attempts,
    transitions: history.transitions.map(transitionOf),
    actions,
    guard_refusals: history.guard_refusals.map(guardRefusalOf),
    approvals: approvalsOf(actions, attempts),
    verifications: history.verifications.map(verificationOf),
  } satisfies Record<PackSection, unknown[]>;
  const contents = Object.fromEntries(
    PACK_SECTIONS.map((s) => [s, { count: lists[s].length, sha256: digestOf(lists[s]) }]),
  ) as PackBody["contents"];
  const resolution = (row.resolution as Resolution | null) ?? null;
  const decision = decideFor(
    { status: row.status as InvocationStatus, commitState: row.commitState, notBefore: row.notBefore, resolution },
    issuedAt,
  );
  return {
    issued_at: issuedAt.toISOString(),
    issuer: { name: "Settle", url: issuerUrl },
    invocation: {
      runtime: row.runtime.name,
      runtime_id: row.runtimeId,
      invocation_id: row.invocationId,
      invocation_uid: row.id,
      task_id: row.taskId,
      tool: row.tool,
      effect_class: row.effectClass,
      idempotency_key: row.idempotencyKey,
      first_seen_at: row.firstSeenAt.toISOString(),
      last_attempt_at: row.lastAttemptAt.toISOString(),
      summary: row.summary,
      possible_duplicate_of: row.possibleDuplicateOf,
    },
    arguments: {
      digest: row.argsDigest,
      value: attempts.findLast((a) => a.arguments !== null)?.arguments ?? null,
    },
    final: {
      status: row.status,
      commit_state: row.commitState,
      next_action: row.nextAction,
      version: row.version,
      status_since: row.statusSince.toISOString(),
      resolution,
      decision: decision.decision,
      reason: decision.reason,
      ran_with_other_arguments: row.argsMismatch ?? false,
      duplicate_review: row.duplicateReview,
      arguments_review: row.argsReview,
    },
    ...lists,
    contents,
    chain: chainOf(history, row.runtimeId),
  };
}
