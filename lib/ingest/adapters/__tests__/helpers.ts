import { expect } from "vitest";
import { normalizeEnvelope } from "../../normalize";
import type { NormalizedAttempt } from "../../../outcome/vocabulary";

export const AT = "2026-11-29T05:12:04.000Z";

export type Case = {
  name: string;
  envelope: unknown;
  read?: boolean;
  expect: Partial<NormalizedAttempt>;
};

/** Normalizes a case's envelope and compares the fields the case names. */
export function check(c: Case) {
  const n = normalizeEnvelope(c.envelope, { isWrite: !c.read, at: AT });
  const picked = Object.fromEntries(Object.keys(c.expect).map((k) => [k, n[k as keyof NormalizedAttempt]]));
  expect(picked).toEqual(c.expect);
  return n;
}
