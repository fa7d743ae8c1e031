import "server-only";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { gaveUpNote, readFinding, type Finding } from "../outcome/verification";
import type { ProbeResult } from "../outcome/vocabulary";
import { recordVerifierProbe } from "./probe";
import {
  askAgain,
  selectRequest,
  updateRequestState,
  type RequestRow,
  type AskedRow,
  type StoredAnswer,
} from "./queries";

// A verifier's answer to one request (POST /api/v1/verifications/{id}, or a webhook's 2xx body). Read by
// lib/outcome/verification's rules: a settling answer is stored as a probe through ingest (so it folds with
// everything else, and contradicting a person's settlement is an evidence conflict, never an overwrite);
// anything else is kept on the request and asked again later.
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

type Request = RequestRow & AskedRow;

function closed(r: Request, why?: string): ApiError {
  return new ApiError("VERIFICATION_CLOSED", why ?? `Verification request ${r.id} is ${r.state.replace("_", " ")}.`);
}

export async function answerVerification(
  db: Db,
  source: AnswerSource,
  id: string,
  finding: Finding,
  now: Date = new Date(),
): Promise<AnswerResult> {
  const r = await selectRequest(db.driver, source.runtimeId, id);
  // Another runtime's request is a 404, the same as one that does not exist.
  if (!r) throw new ApiError("NOT_FOUND", `No verification request ${id} in this runtime.`);
  if (r.state === "scheduled") throw closed(r, `Verification request ${id} has not been asked yet.`);
  const lateEvidence = r.state === "cancelled" && finding.found !== null;
  if (r.state !== "open" && !lateEvidence) throw closed(r);

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
    recordVerifierProbe(
      db,
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
  const base = { id: r.id, invocation_id: r.invocation_id };

  // Someone settled it meanwhile: a definite finding is still evidence, and the fold compares it with theirs.
  if (lateEvidence) {
    await probe(finding.found ? "found" : "absent", undefined, `late:${tryNo}`);
    return { ...base, state: "cancelled", reading: "recorded", next_ask_at: null };
  }

  const reading = readFinding(
    finding,
    { tries: r.tries, firstDispatchedAt: new Date(r.first_dispatched_at), config: r.config },
    now,
  );
  if (reading.kind === "settle") {
    await probe(reading.probe);
    await updateRequestState(db.driver, r, "open", "settled", now, stored(reading.probe));
    return { ...base, state: "settled", reading: reading.probe, next_ask_at: null };
  }
  if (reading.kind === "ask_again") {
    if (!(await askAgain(db.driver, r, reading.dueAt, stored(reading.why), now))) {
      throw closed(r, `Verification request ${id} moved on while this answer was read; ask for work again.`);
    }
    return { ...base, state: "open", reading: "ask_again", next_ask_at: reading.dueAt.toISOString() };
  }
  // The last try answered without settling: a person decides, told what Settle saw.
  await probe("failed", gaveUpNote(r.tries, reading.why, finding.evidence), "gave-up");
  await updateRequestState(db.driver, r, "open", "gave_up", now, stored("gave up"));
  return { ...base, state: "gave_up", reading: "give_up", next_ask_at: null };
}
