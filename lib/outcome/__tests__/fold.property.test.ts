import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deriveInvocation, type FoldRecord } from "../fold";
import { committed, intent, probe, rec, unknownOutcome } from "./fixtures";

const config = { stallWindowS: 300 };

// Record sets that tell the stories of source article 002 (docs/outcome-model.md)'s fixtures, for one invocation.
const stories: FoldRecord[][] = [
  [intent(1, 0), unknownOutcome(1, 8), probe(1, 20, "committed")],
  [
    intent(1, 0),
    rec({ attemptNo: 1, t: 3, commitState: "not_committed", outcome: "retryable", nextAction: "wait_and_retry" }),
    intent(2, 40),
    committed(2, 41),
  ],
  [intent(1, 0), unknownOutcome(1, 8), probe(1, 20, "not_committed"), intent(2, 30), committed(2, 31)],
  [
    intent(1, 0),
    rec({ attemptNo: 1, t: 5, commitState: "partial", outcome: "permanent", nextAction: "verify_operation" }),
  ],
  [committed(1, 5), probe(1, 20, "not_committed")],
  [
    intent(1, 0),
    unknownOutcome(1, 8, { probeResult: "found" }),
    committed(null as unknown as number, 9, { attemptNo: null }),
  ],
  [intent(1, 0, { budgetLeftS: 42 })],
  [intent(1, 0), unknownOutcome(1, 8), probe(null, 20, "unknown")],
];

describe("fold is independent of arrival order", () => {
  it("any permutation of a story's records derives the same state", () => {
    fc.assert(
      fc.property(fc.constantFrom(...stories), fc.integer({ min: 0, max: 2 ** 31 }), (story, seed) => {
        const shuffled = fc.sample(fc.shuffledSubarray(story, { minLength: story.length, maxLength: story.length }), {
          seed,
          numRuns: 1,
        })[0]!;
        expect(deriveInvocation(shuffled, [], config)).toEqual(deriveInvocation(story, [], config));
      }),
      { numRuns: 300 },
    );
  });
});
