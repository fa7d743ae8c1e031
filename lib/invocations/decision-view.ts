import "server-only";
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { Db } from "../db/client";
import { commitStateSchema } from "../outcome/vocabulary";
import { decideFor, decisions } from "../outcome/decisions";
import type { Resolution } from "../outcome/lifecycle";
import { effectiveStatus, type InvocationStatus, type StoredStatus } from "../outcome/status";
import { invocationStatusSchema } from "../outcome/vocabulary";
import { selectDecisionRow, type InvocationRow, type StatusChange } from "./queries";

const time = z.string().meta({ format: "date-time" });

export const decisionSchema = z
  .object({
    invocation_id: z.string(),
    status: invocationStatusSchema,
    decision: z.enum(decisions),
    commit_state: commitStateSchema,
    reason: z.string().nullable(),
    decided_by: z
      .string()
      .nullable()
      .describe(
        'What set the current status: "probe", the operator (their email), "system" (Settle\'s stall window and policies) or "runtime" (its own records).',
      ),
    decided_at: time.nullable(),
    version: z.number().int(),
    approved_arguments: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe(
        "The arguments a person approved in place of the call's own (approve with edits); null when approved as called. Run the call with these: a run with any other arguments is flagged.",
      ),
    reply: z
      .string()
      .nullable()
      .describe(
        "A person's message to the agent with the decision that set the current status (a rejection or an escalation); hand it to the model as the tool's result.",
      ),
  })
  .meta({ id: "Decision" });
export type DecisionView = z.infer<typeof decisionSchema>;

export const decisionQuerySchema = z.object({
  wait: z.coerce
    .number()
    .min(0)
    .max(60)
    .default(0)
    .describe(
      "Seconds to hold the request until the decision (or version) changes: 0 to 60. Compared with If-None-Match when given.",
    ),
});

/** How often a held request looks at the database again. */
export const DECISION_POLL_MS = 300;

const ms = (v: Date | string) => new Date(v).getTime();
const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

/** Whether this action set the status the invocation has now (no record moved it since). */
const setStatus = (row: InvocationRow, change: StatusChange | null): change is StatusChange =>
  change !== null && change.toStatus === row.status && ms(change.at) === ms(row.statusSince);

/** Who or what put the invocation where it is, and when. */
function decider(
  row: InvocationRow,
  change: StatusChange | null,
  status: InvocationStatus,
  decision: DecisionView["decision"],
): { by: string | null; at: string | null } {
  const resolution = row.resolution as Resolution | null;
  if (status === "reconciled" && resolution) {
    return { by: resolution.by === "probe" ? "probe" : (resolution.actor ?? "operator"), at: iso(resolution.at) };
  }
  // The stall window is Settle's rule: no outcome arrived in time.
  if (status === "stalled") return { by: "system", at: iso(row.stallAt) };
  // An operator's or a policy's action, unless a record moved the status since.
  if (setStatus(row, change)) {
    return { by: change.actor, at: iso(change.at) };
  }
  // The runtime's own retry_after ran out.
  if (status === "retry_scheduled" && decision === "retry_allowed" && row.notBefore !== null)
    return { by: "runtime", at: iso(row.notBefore) };
  return { by: "runtime", at: iso(row.statusSince) };
}

/** The decision on a runtime's own invocation; null when that runtime has none by this id. */
export async function getDecision(
  db: Db,
  runtimeId: string,
  invocationId: string,
  now = new Date(),
): Promise<DecisionView | null> {
  const found = await selectDecisionRow(db, runtimeId, invocationId);
  if (!found) return null;
  const { invocation: row, lastChange, approvedArguments } = found;
  const commitState = row.commitState as DecisionView["commit_state"];
  const status = effectiveStatus(row.status as StoredStatus, row.stallAt, now);
  const { decision, reason } = decideFor(
    { status, commitState, notBefore: row.notBefore, resolution: row.resolution as Resolution | null },
    now,
  );
  const { by, at } = decider(row, lastChange, status, decision);
  return {
    invocation_id: row.invocationId,
    status,
    decision,
    commit_state: commitState,
    reason,
    decided_by: by,
    decided_at: at,
    version: row.version,
    approved_arguments: approvedArguments,
    reply: setStatus(row, lastChange) ? lastChange.reply : null,
  };
}

/** A strong ETag over what a runtime acts on: decision, status, version and commit state. */
export function decisionEtag(view: DecisionView): string {
  const digest = createHash("sha256")
    .update(`${view.decision}|${view.status}|${view.version}|${view.commit_state}`)
    .digest("base64url");
  return `"${digest.slice(0, 27)}"`;
}

/** The entity tags of an If-None-Match header; `*` stands for the one the invocation has when the request arrives. Weak tags compare as strong (RFC 9110 §13.1.2). */
export function parseIfNoneMatch(header: string | null): string[] | "*" | null {
  if (header === null || header.trim() === "") return null;
  if (header.trim() === "*") return "*";
  const tags = [...header.matchAll(/(?:W\/)?("[^"]*")/g)].map((m) => m[1]!);
  return tags.length > 0 ? tags : null;
}

export type DecisionWait = {
  /** Seconds to hold the request while nothing changes. */
  waitS: number;
  ifNoneMatch: string[] | "*" | null;
  signal?: AbortSignal;
  pollMs?: number;
};

export type DecisionAnswer = { view: DecisionView; etag: string; notModified: boolean };

/**
 * Reads the decision and, with `waitS`, reads it again every `pollMs` until its
 * ETag differs from the caller's If-None-Match (or, without one, from the
 * first read), the time runs out, or the caller goes away. `notModified`: the
 * answer is still what the caller's If-None-Match names (an HTTP 304).
 */
export async function awaitDecision(
  db: Db,
  runtimeId: string,
  invocationId: string,
  wait: DecisionWait,
): Promise<DecisionAnswer | null> {
  let view = await getDecision(db, runtimeId, invocationId);
  if (!view) return null;
  const known = wait.ifNoneMatch === "*" ? [decisionEtag(view)] : (wait.ifNoneMatch ?? [decisionEtag(view)]);
  const deadline = Date.now() + wait.waitS * 1000;
  const pollMs = wait.pollMs ?? DECISION_POLL_MS;
  while (known.includes(decisionEtag(view)) && Date.now() < deadline && !wait.signal?.aborted) {
    try {
      await sleep(Math.min(pollMs, deadline - Date.now()), undefined, { signal: wait.signal });
    } catch {
      break; // the caller went away: nobody reads the answer
    }
    // Read with the current time: a retry delay or a stall window may have run out meanwhile.
    const next = await getDecision(db, runtimeId, invocationId);
    if (!next) return null;
    view = next;
  }
  const etag = decisionEtag(view);
  const notModified = wait.ifNoneMatch !== null && known.includes(etag);
  return { view, etag, notModified };
}
