import "server-only";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { findingSchema, gaveUpNote, readFinding, stillAsking, type Finding } from "../outcome/verification";
import type { ProbeResult } from "../outcome/vocabulary";
import { recordVerifierProbes, verifierProbeInput } from "./probe";
import { redactText } from "../redact/redact";
import type { PreparedInput } from "../ingest";
import {
  askAgain,
  moveRequests,
  selectRequests,
  type RequestMove,
  type RequestRow,
  type AskedRow,
  type StoredAnswer,
} from "./queries";

// A verifier's answer to one request (POST /api/v1/verifications/{id}, or a webhook's 2xx body). Read by
// lib/outcome/verification's rules: a settling answer is stored as a probe through ingest (so it folds with
// everything else, and contradicting a person's settlement is an evidence conflict, never an overwrite);
// anything else is kept on the request and asked again later.
//
// Answers come one by one (POST /api/v1/verifications/{id}) or several at once from one worker (POST
// /api/v1/verifications): either way their probes go through ingest in one call and their requests move on in
// one statement, so a busy verifier costs Settle a few statements per batch, not per answer.
//
// The probe is written before the request moves on: a crash between the two leaves the evidence stored and the
// request open, which the job then closes because the invocation is no longer verifying. Nothing is lost.

export type AnswerSource = { runtimeId: string; by: string; via: "api" | "webhook" };
export const answerResultSchema = z
  .object({
    id: z.string(),
    invocation_id: z.string(),
    state: z.enum(["settled", "open", "gave_up", "cancelled"]).describe("Where the request stands after this answer."),
    reading: z
      .enum(["found", "absent", "ask_again", "give_up", "recorded"])
      .describe(
        "found / absent: the invocation is settled; ask_again: Settle asks later (next_ask_at); give_up: a person decides; recorded: someone had already settled it, the finding is kept as evidence.",
      ),
    next_ask_at: z.string().nullable(),
  })
  .meta({ id: "VerificationAnswer" });
export type AnswerResult = z.infer<typeof answerResultSchema>;

export const MAX_ANSWERS = 100;

export const answerBatchSchema = z
  .object({
    answers: z
      .array(findingSchema.extend({ id: z.uuid().describe("The id an item of GET /api/v1/verifications carried.") }))
      .min(1)
      .max(MAX_ANSWERS)
      .describe(`Up to ${MAX_ANSWERS} answers; each is taken or refused on its own.`),
  })
  .meta({ id: "VerificationAnswerBatch" });

export const answerBatchResultSchema = z
  .object({
    results: z.array(
      z.union([
        answerResultSchema,
        z.object({
          id: z.string(),
          error: z
            .object({ code: z.string(), message: z.string() })
            .describe("Why this answer was refused (404, 409)."),
        }),
      ]),
    ),
  })
  .meta({ id: "VerificationAnswerBatchResult" });

type Request = RequestRow & AskedRow;

/**
 * A finding as Settle keeps it: its evidence and ref are an upstream system's words (an API's reply, a
 * webhook's body, `Authorization: Bearer …` included), redacted by the rule set every envelope goes through
 * before the request, the probe or a person's page holds them.
 */
function redactFinding(finding: Finding): Finding {
  return {
    ...finding,
    ...(typeof finding.evidence === "string" ? { evidence: redactText(finding.evidence) } : {}),
    ...(typeof finding.ref === "string" ? { ref: redactText(finding.ref) } : {}),
  };
}
type Outcome = { ok: true; result: AnswerResult } | { ok: false; id: string; error: ApiError };

function closed(r: Request, why?: string): ApiError {
  return new ApiError("VERIFICATION_CLOSED", why ?? `Verification request ${r.id} is ${r.state.replace("_", " ")}.`);
}

/** What one answer does, decided before anything is written. */
type Plan =
  | { kind: "refuse"; error: ApiError }
  | { kind: "probe"; r: Request; input: PreparedInput; move: RequestMove | null; result: AnswerResult }
  | { kind: "ask_again"; r: Request; dueAt: Date; stored: StoredAnswer; result: AnswerResult };

function planAnswer(r: Request | undefined, id: string, finding: Finding, source: AnswerSource, now: Date): Plan {
  // Another runtime's request is a 404, the same as one that does not exist.
  if (!r) return { kind: "refuse", error: new ApiError("NOT_FOUND", `No verification request ${id} in this runtime.`) };
  if (r.state === "scheduled")
    return { kind: "refuse", error: closed(r, `Verification request ${id} has not been asked yet.`) };
  // Someone settled it while this worker held the ask (the job leaves a held ask to its answer): the request
  // closes with this answer on it, and a definite finding is still evidence.
  const movedOn = r.state === "open" && !stillAsking(r.status, r.attempt_count, r.attempt);
  const lateEvidence = (r.state === "cancelled" || movedOn) && finding.found !== null;
  if ((r.state !== "open" || movedOn) && !lateEvidence) return { kind: "refuse", error: closed(r) };

  const tryNo = Math.max(r.tries, 1);
  const stored = (reading: string): StoredAnswer => ({
    try: tryNo,
    at: now.toISOString(),
    by: source.by,
    via: source.via,
    found: finding.found,
    evidence: finding.evidence ?? null,
    ref: finding.ref ?? null,
    reading,
  });
  const probe = (result: ProbeResult, evidence = finding.evidence ?? null, step?: string) =>
    verifierProbeInput(
      r,
      {
        settle_verification: { id: r.id, try: tryNo, answered_by: source.by, via: source.via },
        found: finding.found,
        evidence,
        ref: finding.ref ?? null,
      },
      result,
      now,
      step,
    );
  const base = { id: r.id, invocation_id: r.invocation_id, next_ask_at: null };

  // Someone settled it meanwhile: a definite finding is still evidence, and the fold compares it with theirs.
  if (lateEvidence) {
    const input = probe(finding.found ? "found" : "absent", undefined, `late:${tryNo}`);
    const move = movedOn ? { id: r.id, from: "open", to: "cancelled", answer: stored("recorded") } : null;
    return { kind: "probe", r, input, move, result: { ...base, state: "cancelled", reading: "recorded" } };
  }
  const reading = readFinding(
    finding,
    { tries: r.tries, firstDispatchedAt: new Date(r.first_dispatched_at), config: r.config },
    now,
  );
  if (reading.kind === "settle") {
    const move = { id: r.id, from: "open", to: "settled", answer: stored(reading.probe) };
    const result = { ...base, state: "settled", reading: reading.probe } as const;
    return { kind: "probe", r, input: probe(reading.probe), move, result };
  }
  if (reading.kind === "ask_again") {
    const result = { ...base, state: "open", reading: "ask_again", next_ask_at: reading.dueAt.toISOString() } as const;
    return { kind: "ask_again", r, dueAt: reading.dueAt, stored: stored(reading.why), result };
  }
  // The last try answered without settling: a person decides, told what Settle saw.
  const input = probe("failed", gaveUpNote(r.tries, reading.why, finding.evidence), "gave-up");
  const move = { id: r.id, from: "open", to: "gave_up", answer: stored("gave up") };
  return { kind: "probe", r, input, move, result: { ...base, state: "gave_up", reading: "give_up" } };
}

/** Answers of one runtime, each taken or refused on its own, in the order given. */
export async function answerVerifications(
  db: Db,
  source: AnswerSource,
  answers: ReadonlyArray<{ id: string; finding: Finding }>,
  now: Date = new Date(),
): Promise<Outcome[]> {
  const requests = await selectRequests(
    db.driver,
    source.runtimeId,
    answers.map((a) => a.id),
  );
  const seen = new Set<string>();
  const plans = answers.map(({ id, finding }): Plan => {
    const r = requests.get(id);
    if (r && seen.has(id))
      return { kind: "refuse", error: closed(r, `Verification request ${id} is answered twice in this batch.`) };
    seen.add(id);
    return planAnswer(r, id, redactFinding(finding), source, now);
  });

  const probes = plans.filter((p) => p.kind === "probe");
  const runtime = { id: source.runtimeId, name: probes[0]?.r.runtime ?? "" };
  const refused = await recordVerifierProbes(
    db,
    runtime,
    probes.map((p) => p.input),
  );
  const stored = probes.filter((_, i) => !refused.has(i));
  await moveRequests(
    db.driver,
    source.runtimeId,
    stored.flatMap((p) => (p.move ? [p.move] : [])),
    now,
  );

  const outcomes: Outcome[] = [];
  for (const [i, plan] of plans.entries()) {
    const id = answers[i]!.id;
    if (plan.kind === "refuse") outcomes.push({ ok: false, id, error: plan.error });
    else if (plan.kind === "probe") {
      const why = refused.get(probes.indexOf(plan));
      outcomes.push(
        why === undefined
          ? { ok: true, result: plan.result }
          : { ok: false, id, error: new ApiError("INTERNAL", `The answer could not be stored: ${why}`) },
      );
    } else if (await askAgain(db.driver, plan.r, plan.dueAt, plan.stored, now)) {
      outcomes.push({ ok: true, result: plan.result });
    } else {
      const error = closed(
        plan.r,
        `Verification request ${id} moved on while this answer was read; ask for work again.`,
      );
      outcomes.push({ ok: false, id, error });
    }
  }
  return outcomes;
}

export async function answerVerification(
  db: Db,
  source: AnswerSource,
  id: string,
  finding: Finding,
  now: Date = new Date(),
): Promise<AnswerResult> {
  const [outcome] = await answerVerifications(db, source, [{ id, finding }], now);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.result;
}

/** The batch endpoint's answer: each result in the order asked, a refused one with its typed error. */
export async function answerVerificationBatch(
  db: Db,
  source: AnswerSource,
  body: z.infer<typeof answerBatchSchema>,
): Promise<z.infer<typeof answerBatchResultSchema>> {
  const outcomes = await answerVerifications(
    db,
    source,
    body.answers.map(({ id, ...finding }) => ({ id, finding })),
  );
  return {
    results: outcomes.map((o) =>
      o.ok ? o.result : { id: o.id, error: { code: o.error.code, message: o.error.message } },
    ),
  };
}
