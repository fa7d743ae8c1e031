import { describe, expect, it } from "vitest";
import { foldInvocation, type FoldAction, type FoldRecord } from "./fold";

// Approve with edits through the fold (docs/outcome-model.md §4): approvals add up only for the same arguments,
// an approval without arguments approves the pending edit, and a new request for approval forgets the last edit.

const config = { stallWindowS: 300 };
const at = (m: number) => new Date(Date.UTC(2026, 11, 1, 9, m)).toISOString();

const record = (seq: number, attempt: number, m: number, argsDigest: string, approval = true): FoldRecord => ({
  eventKey: `e${seq}`,
  seq,
  attemptNo: attempt,
  phase: "outcome",
  at: at(m),
  outcome: approval ? "permanent" : "ok",
  commitState: approval ? "not_committed" : "committed",
  nextAction: approval ? "request_approval" : "none",
  notBefore: null,
  budgetLeftS: null,
  probeResult: null,
  tool: "create_refund",
  effectClass: "money",
  idempotencyKey: "k",
  argsDigest,
  userMessage: null,
  code: null,
});
const approve = (seq: number, actor: string, edit?: { digest: string; amount: number }): FoldAction => ({
  seq,
  at: at(seq),
  actor,
  quorum: 2,
  action: { action: "approve", ...(edit ? { arguments: { amount: edit.amount } } : {}) },
  ...(edit ? { argumentsDigest: edit.digest } : {}),
});

describe("approve with edits in the fold", () => {
  it("an edit to other arguments starts the count again; an approval without arguments approves the pending edit", () => {
    const records = [record(1, 1, 1, "sha256:orig")];
    const oneOriginal = foldInvocation(records, [approve(2, "ana")], config);
    expect(oneOriginal).toMatchObject({ status: "awaiting_approval", approvals: ["ana"], pendingEdit: null });

    const edited = foldInvocation(
      records,
      [approve(2, "ana"), approve(3, "bo", { digest: "sha256:e", amount: 50 })],
      config,
    );
    // Ana approved other arguments: Bo's edit is the first approval of the new ones.
    expect(edited).toMatchObject({
      status: "awaiting_approval",
      approvals: ["bo"],
      pendingEdit: { digest: "sha256:e" },
    });

    const both = foldInvocation(
      records,
      [approve(2, "ana"), approve(3, "bo", { digest: "sha256:e", amount: 50 }), approve(4, "ana")],
      config,
    );
    expect(both).toMatchObject({
      status: "approved",
      approvedDigest: "sha256:e",
      approvedEdit: { digest: "sha256:e", arguments: { amount: 50 }, by: "bo" },
      pendingEdit: null,
    });

    // The run with the edited arguments is not flagged; with the call's own it is.
    const ranEdited = foldInvocation(
      [...records, record(5, 2, 5, "sha256:e", false)],
      [approve(2, "bo", { digest: "sha256:e", amount: 50 }), approve(3, "ana")],
      config,
    );
    expect(ranEdited).toMatchObject({ status: "succeeded", argsMismatch: false });
    const ranOwn = foldInvocation(
      [...records, record(5, 2, 5, "sha256:orig", false)],
      [approve(2, "bo", { digest: "sha256:e", amount: 50 }), approve(3, "ana")],
      config,
    );
    expect(ranOwn).toMatchObject({ status: "succeeded", argsMismatch: true });
  });

  it("a new request for approval forgets the last approved edit", () => {
    const approved = foldInvocation(
      [record(1, 1, 1, "sha256:orig")],
      [approve(2, "bo", { digest: "sha256:e", amount: 50 }), approve(3, "ana")],
      config,
    );
    expect(approved.approvedEdit).not.toBeNull();
    const askedAgain = foldInvocation(
      [record(1, 1, 1, "sha256:orig"), record(5, 2, 5, "sha256:e")],
      [approve(2, "bo", { digest: "sha256:e", amount: 50 }), approve(3, "ana")],
      config,
    );
    expect(askedAgain).toMatchObject({ status: "awaiting_approval", approvedEdit: null, pendingEdit: null });
  });
});
