import { describe, expect, it } from "vitest";
import { applyAction, actionsAllowed, allowedFrom, type OperatorAction } from "../actions";
import { deriveInvocation } from "../fold";
import { initialState, statusForOutcome, type LifecycleState } from "../lifecycle";
import { effectiveStatus, invocationStatuses, type InvocationStatus, type StoredStatus } from "../status";
import { committed, intent, probe, rec, T, unknownOutcome } from "./fixtures";

const config = { stallWindowS: 300 };
const at = "2026-11-29T06:00:00.000Z";

function stateIn(status: InvocationStatus): LifecycleState {
  const base = initialState("2026-11-29T05:00:00.000Z");
  if (status === "stalled") return { ...base, status: "pending", stallAt: "2026-11-29T05:05:00.000Z" };
  if (status === "pending") return { ...base, status: "pending", stallAt: "2026-11-29T07:00:00.000Z" };
  return { ...base, status: status as StoredStatus };
}

const sample: Record<OperatorAction["action"], OperatorAction> = {
  approve: { action: "approve" },
  reject: { action: "reject" },
  request_verification: { action: "request_verification" },
  record_verification: { action: "record_verification", result: "found", evidence: "invoice INV-1 exists" },
  mark_reconciled: { action: "mark_reconciled", commit_state: "not_committed", note: "no charge in Stripe" },
  escalate: { action: "escalate", note: "provider down" },
  assign: { action: "assign", assignee: "ana@example.com" },
  unassign: { action: "unassign" },
  comment: { action: "comment", note: "looking" },
};

const expectedTo: Partial<Record<OperatorAction["action"], InvocationStatus>> = {
  approve: "approved",
  reject: "rejected",
  request_verification: "verifying",
  record_verification: "reconciled",
  mark_reconciled: "reconciled",
  escalate: "escalated",
};

describe("operator transition table (docs/outcome-model.md §4)", () => {
  const rows = (Object.keys(sample) as OperatorAction["action"][]).flatMap((action) =>
    invocationStatuses.map((from) => ({ action, from, allowed: allowedFrom[action]?.includes(from) ?? true })),
  );

  it.each(rows)("$action from $from → allowed: $allowed", ({ action, from, allowed }) => {
    const result = applyAction(stateIn(from), sample[action], { actor: "ana@example.com", at });
    expect(result.ok).toBe(allowed);
    if (result.ok) {
      expect(result.from).toBe(from);
      expect(result.to).toBe(expectedTo[action] ?? from);
    } else {
      expect(result.code).toBe("TRANSITION_REFUSED");
    }
  });

  it("record_verification inconclusive leaves the status unchanged", () => {
    const r = applyAction(
      stateIn("outcome_unknown"),
      { action: "record_verification", result: "inconclusive" },
      { actor: "a", at },
    );
    expect(r.ok && r.to).toBe("outcome_unknown");
  });

  it("found / absent settle with the operator as resolver", () => {
    const found = applyAction(stateIn("verifying"), sample.record_verification, { actor: "ana", at });
    expect(found.ok && found.state.resolution).toMatchObject({
      commit_state: "committed",
      by: "operator",
      actor: "ana",
    });
    const absent = applyAction(
      stateIn("verifying"),
      { action: "record_verification", result: "absent" },
      { actor: "bo", at },
    );
    expect(absent.ok && absent.state.commitState).toBe("not_committed");
  });

  it("approval quorum: two different people; the same person cannot approve twice", () => {
    const first = applyAction(stateIn("awaiting_approval"), sample.approve, { actor: "ana", at, quorum: 2 });
    expect(first.ok && first.to).toBe("awaiting_approval");
    if (!first.ok) throw new Error("unreachable");
    const again = applyAction(first.state, sample.approve, { actor: "ana", at, quorum: 2 });
    expect(again).toMatchObject({ ok: false, code: "ALREADY_APPROVED" });
    const second = applyAction(first.state, sample.approve, { actor: "bo", at, quorum: 2 });
    expect(second.ok && second.to).toBe("approved");
  });

  it("never offers anything that could retry an unknown write", () => {
    const offered = actionsAllowed(stateIn("outcome_unknown"), new Date(at));
    expect(offered).toEqual(
      expect.arrayContaining([
        "request_verification",
        "record_verification",
        "mark_reconciled",
        "escalate",
        "assign",
        "comment",
      ]),
    );
    expect(offered).not.toContain("approve");
  });
});

describe("status from an outcome", () => {
  it.each([
    [{ commitState: "committed", outcome: "ok", nextAction: "none" }, "succeeded"],
    [{ commitState: "partial", outcome: "permanent", nextAction: "verify_operation" }, "partially_applied"],
    [{ commitState: "unknown", outcome: "unknown", nextAction: "verify_operation" }, "outcome_unknown"],
    [{ commitState: "unknown", outcome: "unknown", nextAction: "escalate" }, "escalated"],
    [{ commitState: "not_committed", outcome: "permanent", nextAction: "correct_input" }, "needs_input"],
    [{ commitState: "not_committed", outcome: "permanent", nextAction: "request_approval" }, "awaiting_approval"],
    [{ commitState: "not_committed", outcome: "retryable", nextAction: "wait_and_retry" }, "retry_scheduled"],
    [{ commitState: "not_committed", outcome: "permanent", nextAction: "choose_alternative" }, "failed"],
    [{ commitState: "not_committed", outcome: "permanent", nextAction: "escalate" }, "escalated"],
  ] as const)("%o → %s", (e, status) => {
    expect(statusForOutcome(e)).toBe(status);
  });
});

describe("stall window", () => {
  it("an intent without an outcome is pending, then stalled once the default window has passed", () => {
    const d = deriveInvocation([intent(1, 0)], [], config);
    expect(d.status).toBe("pending");
    expect(d.stallAt).toBe(T(300).toISOString());
    expect(effectiveStatus(d.status, d.stallAt, T(299))).toBe("pending");
    expect(effectiveStatus(d.status, d.stallAt, T(300))).toBe("stalled");
  });

  it("the intent's budget_left_s sets the window", () => {
    const d = deriveInvocation([intent(1, 0, { budgetLeftS: 42 })], [], config);
    expect(effectiveStatus(d.status, d.stallAt, T(41))).toBe("pending");
    expect(effectiveStatus(d.status, d.stallAt, T(42))).toBe("stalled");
  });

  it("an outcome ends the window", () => {
    const d = deriveInvocation([intent(1, 0), committed(1, 5)], [], config);
    expect(d.status).toBe("succeeded");
    expect(d.stallAt).toBeNull();
  });

  it("a stalled invocation can be escalated, as the table allows", () => {
    const d = deriveInvocation([intent(1, 0)], [], config);
    const r = applyAction(d, sample.escalate, { actor: "ana", at: T(400).toISOString() });
    expect(r.ok && r.from).toBe("stalled");
  });
});

/** An unknown outcome (seq 1), an operator's not-committed settlement at 60 s (seq 2), then `later`: the operator's
 * settlement stands as the resolution, and the contradiction re-opens the invocation. */
function expectReopenedOverOperator(later: ReturnType<typeof probe>) {
  const actions = [{ seq: 2, at: T(60).toISOString(), actor: "ana", action: sample.mark_reconciled }];
  const d = deriveInvocation([unknownOutcome(1, 5, { seq: 1 }), later], actions, config);
  expect(d).toMatchObject({
    status: "outcome_unknown",
    conflict: true,
    resolution: { by: "operator", commit_state: "not_committed" },
  });
}

describe("folding evidence", () => {
  it("source article 002 (docs/outcome-model.md) fixture 1: unknown, then a probe finds it → reconciled as committed by the probe", () => {
    const d = deriveInvocation([intent(1, 0), unknownOutcome(1, 8), probe(1, 20, "committed")], [], config);
    expect(d).toMatchObject({
      status: "reconciled",
      commitState: "committed",
      resolution: { by: "probe", commit_state: "committed" },
    });
  });

  it("a probe that finds nothing allows a retry with the same key", () => {
    const d = deriveInvocation([unknownOutcome(1, 8), probe(1, 20, "not_committed")], [], config);
    expect(d).toMatchObject({ status: "reconciled", commitState: "not_committed" });
  });

  it("a failed probe keeps the outcome unknown and escalates", () => {
    const d = deriveInvocation([unknownOutcome(1, 8), probe(1, 20, "unknown")], [], config);
    expect(d).toMatchObject({ status: "escalated", commitState: "unknown" });
  });

  it("a source article 002 (docs/outcome-model.md) log line with outcome unknown and probe found settles committed", () => {
    const d = deriveInvocation([unknownOutcome(2, 8, { probeResult: "found" })], [], config);
    expect(d).toMatchObject({ status: "reconciled", commitState: "committed" });
  });

  it("evidence that disagrees with a settlement re-opens it with conflict", () => {
    const d = deriveInvocation([committed(1, 5), probe(1, 20, "not_committed")], [], config);
    expect(d).toMatchObject({ status: "outcome_unknown", conflict: true, commitState: "unknown" });
  });

  it("an operator's settlement contradicted by a later probe re-opens it", () => {
    expectReopenedOverOperator({ ...probe(1, 90, "committed"), seq: 3 });
  });

  it("a probe with a stated result that contradicts an operator re-opens it once, never settling it over them", () => {
    expectReopenedOverOperator({ ...probe(1, 90, "committed"), probeResult: "found" as const, seq: 3 });
  });

  it("a retry after a tool's own not-committed answer is not a conflict", () => {
    const d = deriveInvocation(
      [
        rec({ attemptNo: 1, t: 1, commitState: "not_committed", outcome: "retryable", nextAction: "wait_and_retry" }),
        intent(2, 40),
        committed(2, 41),
      ],
      [],
      config,
    );
    expect(d).toMatchObject({ status: "succeeded", conflict: false, attemptCount: 2 });
  });

  it("a late unknown report does not undo a probe's settlement", () => {
    const d = deriveInvocation([probe(1, 20, "committed"), unknownOutcome(1, 8)], [], config);
    expect(d.status).toBe("reconciled");
  });

  it("an intent after an unresolved unknown does not hide it", () => {
    const d = deriveInvocation([unknownOutcome(1, 8), intent(2, 30)], [], config);
    expect(d.status).toBe("outcome_unknown");
  });

  it("operator verifying is not undone by a repeated unknown for the same attempt", () => {
    const records = [unknownOutcome(1, 5), unknownOutcome(1, 6)];
    records[1]!.seq = 3;
    const d = deriveInvocation(
      records,
      [{ seq: 2, at: T(10).toISOString(), actor: "ana", action: sample.request_verification }],
      config,
    );
    expect(d.status).toBe("verifying");
  });
});
