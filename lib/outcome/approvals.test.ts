import { describe, expect, it } from "vitest";
import { applyAction } from "./actions";
import { applyEvidence, initialState, type Evidence, type LifecycleState } from "./lifecycle";

// Decision 014: approvals belong to one stay in awaiting_approval. Leaving it
// forgets them, so a return asks every approver again.

const config = { stallWindowS: 300 };
const at = (m: number) => new Date(Date.UTC(2026, 11, 1, 9, m)).toISOString();

const needsApproval = (attempt: number, m: number): Evidence => ({
  phase: "outcome",
  attempt,
  at: at(m),
  outcome: "permanent",
  commitState: "not_committed",
  nextAction: "request_approval",
  notBefore: null,
  budgetLeftS: null,
  probeResult: null,
});

function awaiting(): LifecycleState {
  const state = applyEvidence(initialState(at(0)), needsApproval(1, 1), config);
  expect(state.status).toBe("awaiting_approval");
  return state;
}

function act(
  state: LifecycleState,
  action: Parameters<typeof applyAction>[1],
  actor: string,
  m: number,
  quorum = 2,
): LifecycleState {
  const result = applyAction(state, action, { actor, at: at(m), quorum });
  if (!result.ok) throw new Error(result.message);
  return result.state;
}

describe("approvals after escalation (decision 014)", () => {
  it("an approval given before an escalation does not count once the invocation awaits approval again", () => {
    let state = act(awaiting(), { action: "approve" }, "ana@example.com", 2);
    expect(state.approvals).toEqual(["ana@example.com"]);
    state = act(state, { action: "escalate", note: "amount looks wrong" }, "bo@example.com", 3);
    expect(state.status).toBe("escalated");
    expect(state.approvals).toEqual([]);

    state = applyEvidence(state, needsApproval(2, 4), config);
    expect(state.status).toBe("awaiting_approval");
    expect(state.approvals).toEqual([]);

    // Ana may (and must) approve again; her approval alone does not meet the quorum of two.
    state = act(state, { action: "approve" }, "ana@example.com", 5);
    expect(state.status).toBe("awaiting_approval");
    state = act(state, { action: "approve" }, "cy@example.com", 6);
    expect(state.status).toBe("approved");
  });

  it("inside one stay, approvals add up and the same person cannot count twice", () => {
    const once = act(awaiting(), { action: "approve" }, "ana@example.com", 2);
    const twice = applyAction(once, { action: "approve" }, { actor: "ana@example.com", at: at(3), quorum: 2 });
    expect(twice).toMatchObject({ ok: false, code: "ALREADY_APPROVED" });
    const commented = act(once, { action: "comment", note: "checking the amount" }, "bo@example.com", 4);
    expect(commented.approvals).toEqual(["ana@example.com"]);
  });

  it("a rejection forgets the approvals given so far", () => {
    const state = act(
      act(awaiting(), { action: "approve" }, "ana@example.com", 2),
      { action: "reject" },
      "bo@example.com",
      3,
    );
    expect(state.status).toBe("rejected");
    expect(state.approvals).toEqual([]);
  });
});
