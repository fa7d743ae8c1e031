import type { NormalizedAttempt } from "../../outcome/vocabulary";
import { failureWithoutEvidence, type AdapterContext } from "./shared";

// An envelope in no known dialect is kept and read as a failure without
// evidence, so that a person looks at a write whose outcome nobody stated.

export function normalizeUnrecognized(_value: unknown, ctx: AdapterContext): NormalizedAttempt {
  return {
    dialect: "unrecognized",
    wrapper_dialect: null,
    ...failureWithoutEvidence(ctx, { code: "UNRECOGNIZED_ENVELOPE" }),
  };
}
