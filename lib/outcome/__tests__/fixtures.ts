import type { FoldRecord } from "../fold";

let counter = 0;
const T0 = Date.parse("2026-11-29T05:00:00.000Z");

/** A record as the fold sees it; defaults describe a committed write outcome of attempt 1. */
export function rec(patch: Partial<FoldRecord> & { t?: number }): FoldRecord {
  const { t = 0, ...rest } = patch;
  counter += 1;
  return {
    eventKey: `e${String(counter).padStart(4, "0")}`,
    seq: 1,
    attemptNo: 1,
    phase: "outcome",
    at: new Date(T0 + t * 1000).toISOString(),
    outcome: "ok",
    commitState: "committed",
    nextAction: "none",
    notBefore: null,
    budgetLeftS: null,
    probeResult: null,
    tool: "create_order",
    effectClass: "create",
    idempotencyKey: "k1",
    userMessage: null,
    code: null,
    ...rest,
  };
}

export const intent = (attemptNo: number, t: number, extra: Partial<FoldRecord> = {}) =>
  rec({ phase: "intent", attemptNo, t, outcome: "unknown", commitState: "unknown", ...extra });
export const unknownOutcome = (attemptNo: number, t: number, extra: Partial<FoldRecord> = {}) =>
  rec({ attemptNo, t, outcome: "unknown", commitState: "unknown", nextAction: "verify_operation", ...extra });
export const committed = (attemptNo: number, t: number, extra: Partial<FoldRecord> = {}) =>
  rec({ attemptNo, t, ...extra });
export const probe = (attemptNo: number | null, t: number, commitState: FoldRecord["commitState"]) =>
  rec({ phase: "probe", attemptNo, t, commitState, outcome: commitState === "unknown" ? "unknown" : "ok" });

export const T = (s: number) => new Date(T0 + s * 1000);
