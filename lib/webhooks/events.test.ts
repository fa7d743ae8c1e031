import { describe, expect, it } from "vitest";
import { bodyOf } from "./body";
import { eventFor, type TransitionFacts } from "./events";

const at = new Date("2026-12-01T04:00:00.000Z");
const createdAt = new Date("2026-12-01T04:00:03.000Z");

function facts(over: Partial<TransitionFacts>): TransitionFacts {
  return {
    id: "41",
    invocationUid: "0b7e3f5c-1d2a-4c3b-9e8f-7a6b5c4d3e2f",
    status: "pending",
    commitState: "unknown",
    resolutionBy: null,
    notBefore: null,
    version: 2,
    at,
    fromStatus: null,
    previous: null,
    actor: null,
    invocationId: "inv-1",
    taskId: "task-1",
    tool: "create_invoice",
    effectClass: "money",
    idempotencyKey: "k-1",
    runtime: "billing-agent",
    ...over,
  };
}

const unknown = { commitState: "unknown", resolutionBy: null, notBefore: null };
/** A verification a probe settled: reconciled as committed. */
const probeReconciled = facts({
  fromStatus: "verifying",
  status: "reconciled",
  commitState: "committed",
  resolutionBy: "probe",
  previous: unknown,
});

describe("which transitions become webhook events", () => {
  it.each([
    ["a first pending state", facts({}), null],
    [
      "pending → outcome_unknown (still wait)",
      facts({ fromStatus: "pending", status: "outcome_unknown", previous: unknown }),
      null,
    ],
    [
      "outcome_unknown → verifying",
      facts({ fromStatus: "outcome_unknown", status: "verifying", previous: unknown }),
      ["invocation.decision_changed", "verify", "wait"],
    ],
    [
      "→ approved",
      facts({ fromStatus: "awaiting_approval", status: "approved", previous: unknown }),
      ["invocation.decision_changed", "proceed", "wait"],
    ],
    [
      "→ reconciled not committed",
      facts({
        fromStatus: "outcome_unknown",
        status: "reconciled",
        commitState: "not_committed",
        resolutionBy: "operator",
        previous: unknown,
      }),
      ["invocation.settled", "retry_allowed", "wait"],
    ],
    ["→ reconciled committed by a probe", probeReconciled, ["invocation.settled", "do_not_retry", "verify"]],
    [
      "a first state that succeeded",
      facts({ status: "succeeded", commitState: "committed" }),
      ["invocation.settled", "do_not_retry", null],
    ],
    [
      "→ rejected",
      facts({ fromStatus: "awaiting_approval", status: "rejected", commitState: "not_committed", previous: unknown }),
      ["invocation.settled", "abandon", "wait"],
    ],
    [
      "→ needs_input",
      facts({ fromStatus: "pending", status: "needs_input", commitState: "not_committed", previous: unknown }),
      ["invocation.decision_changed", "correct_input", "wait"],
    ],
    [
      "succeeded → outcome_unknown (re-opened by conflicting evidence)",
      facts({
        fromStatus: "succeeded",
        status: "outcome_unknown",
        previous: { commitState: "committed", resolutionBy: null, notBefore: null },
      }),
      ["invocation.decision_changed", "wait", "do_not_retry"],
    ],
    [
      "→ retry_scheduled before its not_before",
      facts({
        fromStatus: "pending",
        status: "retry_scheduled",
        commitState: "not_committed",
        notBefore: new Date(at.getTime() + 30_000),
        previous: unknown,
      }),
      null,
    ],
    [
      "→ retry_scheduled whose delay has passed",
      facts({
        fromStatus: "pending",
        status: "retry_scheduled",
        commitState: "not_committed",
        notBefore: new Date(at.getTime() - 1),
        previous: unknown,
      }),
      ["invocation.decision_changed", "retry_allowed", "wait"],
    ],
    [
      "retry_scheduled (delay passed) → pending of the next attempt",
      facts({
        fromStatus: "retry_scheduled",
        status: "pending",
        previous: { commitState: "not_committed", resolutionBy: null, notBefore: new Date(at.getTime() - 5_000) },
      }),
      ["invocation.decision_changed", "wait", "retry_allowed"],
    ],
  ] as const)("%s", (_name, input, expected) => {
    const event = eventFor(input, createdAt);
    expect(event === null ? null : [event.type, event.data.decision, event.data.previous_decision]).toEqual(expected);
  });

  it("carries docs/outcome-model.md §5's decision body and what the runtime needs to match it", () => {
    const event = eventFor(
      facts({
        fromStatus: "outcome_unknown",
        status: "reconciled",
        commitState: "committed",
        resolutionBy: "operator",
        actor: "ana@example.com",
        previous: unknown,
      }),
      createdAt,
    );
    expect(event).toEqual({
      id: "evt_0b7e3f5c1d2a4c3b9e8f7a6b5c4d3e2f_41",
      type: "invocation.settled",
      created_at: "2026-12-01T04:00:03.000Z",
      data: {
        invocation_id: "inv-1",
        status: "reconciled",
        decision: "do_not_retry",
        commit_state: "committed",
        reason: "Settled as committed by operator: the effect exists.",
        decided_by: "ana@example.com",
        decided_at: "2026-12-01T04:00:00.000Z",
        version: 2,
        previous_decision: "wait",
        from_status: "outcome_unknown",
        to_status: "reconciled",
        not_before: null,
        task_id: "task-1",
        tool: "create_invoice",
        effect_class: "money",
        idempotency_key: "k-1",
        summary: null,
        runtime: "billing-agent",
      },
    });
  });

  it("names the runtime's own outcome or a probe when no person acted", () => {
    expect(eventFor(facts({ status: "succeeded", commitState: "committed" }), createdAt)?.data.decided_by).toBe(
      "runtime",
    );
    expect(eventFor(probeReconciled, createdAt)?.data.decided_by).toBe("probe");
  });

  it("sends the body in the documented key order, whatever order the outbox kept", () => {
    const event = eventFor(facts({ status: "succeeded", commitState: "committed" }), createdAt)!;
    const shuffled = JSON.parse(
      JSON.stringify({
        data: Object.fromEntries(Object.entries(event.data).reverse()),
        type: event.type,
        created_at: event.created_at,
        id: event.id,
      }),
    );
    expect(bodyOf(shuffled)).toBe(JSON.stringify(event));
  });
});
