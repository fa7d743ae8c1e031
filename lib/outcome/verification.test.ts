import { describe, expect, it } from "vitest";
import {
  firstAskAt,
  gaveUpNote,
  NO_VERIFIER_RUNNING,
  noVerifierNote,
  readFinding,
  silenceLimitS,
  stillAsking,
  unserved,
  verifierRunning,
  verifyConfigSchema,
  type AskingState,
} from "./verification";

const config = { after_s: 30, every_s: 60, max_tries: 3, absent_after_s: 120, lease_s: 30 };
const T0 = new Date("2026-12-03T10:00:00.000Z");
const s = (n: number) => new Date(T0.getTime() + n * 1000);
const state = (tries: number): AskingState => ({ tries, firstDispatchedAt: T0, config });

describe("verify settings", () => {
  it("takes 1 s to 1 day for every duration, and nothing else", () => {
    expect(verifyConfigSchema.safeParse(config).success).toBe(true);
    expect(verifyConfigSchema.safeParse({ ...config, after_s: 0 }).success).toBe(false);
    expect(verifyConfigSchema.safeParse({ ...config, every_s: 86_401 }).success).toBe(false);
    expect(verifyConfigSchema.safeParse({ ...config, lease_s: 1.5 }).success).toBe(false);
    expect(verifyConfigSchema.safeParse({ ...config, max_tries: 0 }).success).toBe(false);
    expect(verifyConfigSchema.safeParse({ ...config, extra: 1 }).success).toBe(false);
    const { absent_after_s: _, ...missing } = config;
    expect(verifyConfigSchema.safeParse(missing).success).toBe(false);
  });

  it("asks first after_s after the call became unknown", () => {
    expect(firstAskAt(T0, config)).toEqual(s(30));
  });
});

describe("what an answer does", () => {
  it("found settles as committed, whenever it comes", () => {
    expect(readFinding({ found: true }, state(1), s(1))).toEqual({ kind: "settle", probe: "found" });
    expect(readFinding({ found: true }, state(3), s(1))).toEqual({ kind: "settle", probe: "found" });
  });

  it("not found settles as not committed only once the first dispatch is absent_after_s old", () => {
    expect(readFinding({ found: false }, state(1), s(120))).toEqual({ kind: "settle", probe: "absent" });
    const early = readFinding({ found: false }, state(1), s(40));
    expect(early.kind).toBe("ask_again");
    // Asked again when absence can count, not merely every_s later.
    expect(early.kind === "ask_again" && early.dueAt).toEqual(s(120));
    const nearly = readFinding({ found: false }, state(1), s(100));
    expect(nearly.kind === "ask_again" && nearly.dueAt).toEqual(s(160));
  });

  it("null, an error or no answer asks again every_s later", () => {
    expect(readFinding({ found: null, evidence: "503" }, state(1), s(40))).toEqual({
      kind: "ask_again",
      dueAt: s(100),
      why: "the lookup could not tell",
    });
    expect(readFinding(null, state(2), s(40))).toEqual({ kind: "ask_again", dueAt: s(100), why: "no answer" });
  });

  it("after max_tries asks with no settling answer, a person decides", () => {
    expect(readFinding(null, state(3), s(400))).toEqual({ kind: "give_up", why: "no answer" });
    expect(readFinding({ found: false }, state(3), s(50)).kind).toBe("give_up");
    expect(gaveUpNote(5, "no answer", null)).toBe("Settle asked 5 times: no settling answer (last: no answer).");
    expect(gaveUpNote(1, "the lookup could not tell", "timeout")).toBe(
      "Settle asked once: no settling answer (last: the lookup could not tell: timeout).",
    );
  });
});

describe("stillAsking", () => {
  it("keeps a request while its invocation is verifying or still unknown at the same attempt, and only then", () => {
    expect(stillAsking("verifying", 1, 1)).toBe(true);
    // Taken but not yet moved to verifying by its taker: not a reason to close it.
    expect(stillAsking("outcome_unknown", 1, 1)).toBe(true);
    expect(stillAsking("pending", 1, 1)).toBe(true);
    expect(stillAsking("reconciled", 1, 1)).toBe(false);
    expect(stillAsking("escalated", 1, 1)).toBe(false);
    // A new attempt started: the ask was about the old one.
    expect(stillAsking("verifying", 2, 1)).toBe(false);
  });
});

describe("verifier liveness", () => {
  const fast = { every_s: 10 };
  const slow = { every_s: 300 };
  const polled = (at: Date | null) => ({ lastPollAt: at, push: false });

  it("waits two every_s, and at least a minute, without a poll", () => {
    expect(silenceLimitS(fast)).toBe(60);
    expect(silenceLimitS(slow)).toBe(600);
    expect(verifierRunning(polled(s(0)), fast, s(59))).toBe(true);
    expect(verifierRunning(polled(s(0)), fast, s(60))).toBe(false);
    expect(verifierRunning(polled(s(0)), slow, s(599))).toBe(true);
    expect(verifierRunning(polled(null), fast, s(0))).toBe(false);
    expect(verifierRunning({ lastPollAt: null, push: true }, fast, s(10_000))).toBe(true);
  });

  it("an ask is unserved once it has waited the limit with nobody asking", () => {
    const ask = { waitingSince: s(0), config: fast };
    expect(unserved(ask, polled(null), s(59))).toBe(false);
    expect(unserved(ask, polled(null), s(60))).toBe(true);
    // A worker asked 30 s ago: it will take the ask at its next poll.
    expect(unserved(ask, polled(s(30)), s(60))).toBe(false);
    expect(unserved(ask, { lastPollAt: null, push: true }, s(3_600))).toBe(false);
    expect(noVerifierNote("billing-agent", null)).toContain(NO_VERIFIER_RUNNING);
  });
});
