import { describe, expect, it } from "vitest";
import { prepareRecord } from "./record";
import type { PreparedRecord } from "../write/prepared-record";

const receivedAt = new Date("2026-11-29T00:00:01.000Z");
const line = (started: string) => ({
  task: "ord-1",
  call: "create_order",
  intent_key: "k",
  attempt: 1,
  started,
  outcome: "ok",
});

describe("preparing a record", () => {
  it("places a source article 002 (docs/outcome-model.md) time of day on its own day, not in the future", () => {
    expect((prepareRecord(line("23:59:58"), receivedAt) as PreparedRecord).at).toBe("2026-11-28T23:59:58.000Z");
    expect((prepareRecord(line("00:00:00"), receivedAt) as PreparedRecord).at).toBe("2026-11-29T00:00:00.000Z");
  });

  it("rejects an impossible time of day", () => {
    expect(prepareRecord(line("25:61:00"), receivedAt)).toMatchObject({ code: "INVALID_TIMESTAMP" });
  });

  it("derives the invocation id from the idempotency key, scoped by task", () => {
    const p = prepareRecord({ task_id: "ord-1", tool: "t", idempotency_key: "k1" }, receivedAt) as PreparedRecord;
    expect(p.invocationId).toBe("ord-1:k1");
    const fromRef = prepareRecord(
      { task_id: "ord-1", tool: "t", envelope: { ok: false, commit_state: "unknown", operation_ref: "run_81/step_4" } },
      receivedAt,
    ) as PreparedRecord;
    expect(fromRef.invocationId).toBe("ord-1:run_81/step_4");
  });

  it("treats a missing or unknown effect class as a write", () => {
    const p = prepareRecord(
      {
        task_id: "t",
        invocation_id: "i",
        tool: "x",
        effect_class: "teleport",
        envelope: { content: [{ type: "text", text: "x" }], isError: true },
      },
      receivedAt,
    ) as PreparedRecord;
    expect(p.effectClass).toBeNull();
    expect(p.normalized.commit_state).toBe("unknown");
  });

  it("keys a record without event_id by a hash that ignores key order", () => {
    const a = prepareRecord(
      { task_id: "t", invocation_id: "i", tool: "x", at: "2026-11-29T00:00:00Z" },
      receivedAt,
    ) as PreparedRecord;
    const b = prepareRecord(
      { at: "2026-11-29T00:00:00Z", tool: "x", invocation_id: "i", task_id: "t" },
      receivedAt,
    ) as PreparedRecord;
    expect(a.eventKey).toMatch(/^sha256:/);
    expect(a.eventKey).toBe(b.eventKey);
  });
});
