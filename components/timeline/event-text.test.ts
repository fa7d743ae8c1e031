import { describe, expect, it } from "vitest";
import { at, inv, opts, rec } from "@/lib/invocations/__tests__/timeline-fixtures";
import { buildTimeline, type RecordEvent } from "@/lib/invocations/timeline-builder";
import { recordSummary, recordTitle } from "./event-text";

// wrapTool asks the guard (which writes the intent when it allows the call) and then reports its own intent
// for the same attempt: the timeline says which row is which, not two bare "Intent, attempt 1".
describe("an intent row says who wrote it", () => {
  it("the guard's intent and the runtime's own for one attempt read differently", () => {
    const timeline = buildTimeline(
      [
        inv({
          attempts: [
            rec({ phase: "intent", at: at(0), event_id: "guard:5b0c" }),
            rec({ phase: "intent", at: at(1), event_id: "task:key:a1:intent" }),
            rec({ phase: "outcome", at: at(2), commit_state: "committed", outcome: "ok" }),
          ],
        }),
      ],
      opts(10),
    );
    const intents = timeline.events.filter((e): e is RecordEvent => e.kind === "record" && e.phase === "intent");
    const lines = intents.map((e) => `${recordTitle(e)}: ${recordSummary(e)}`);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^Intent, attempt 1, from Settle's guard: .*allowed the call/);
    expect(lines[1]).toMatch(/^Intent, attempt 1, reported by the runtime: /);
  });
});
