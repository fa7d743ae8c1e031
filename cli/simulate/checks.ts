import type { InvocationView } from "@/lib/invocations/read";
import type { Inv, SimContext } from "./recorder";

// Expectations about what Settle shows, read back through its API. A check
// collects every problem it finds, so one FAIL line says all that is wrong.

export type Attempt = InvocationView["attempts"][number];
export type Problems = string[];

export const outcomesOf = (view: InvocationView): Attempt[] => view.attempts.filter((a) => a.phase === "outcome");
export const intentsOf = (view: InvocationView): Attempt[] => view.attempts.filter((a) => a.phase === "intent");

export function want(problems: Problems, what: string, actual: unknown, expected: unknown): void {
  if (actual !== expected) problems.push(`${what} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
}

export function checkInvocations(
  ctx: SimContext,
  name: string,
  invs: Array<Pick<Inv, "id">>,
  verify: (views: InvocationView[], problems: Problems) => void,
): void {
  ctx.checks.push({
    name,
    invocationIds: invs.map((i) => i.id),
    verify: (found) => {
      const views = invs.map((i) => found.get(i.id));
      const missing = invs.filter((_, n) => !views[n]).map((i) => i.id);
      if (missing.length > 0) return [`Settle has no invocation ${missing.join(", ")}`];
      const problems: Problems = [];
      verify(views as InvocationView[], problems);
      return problems;
    },
  });
}

export function checkInvocation(
  ctx: SimContext,
  name: string,
  inv: Inv,
  verify: (view: InvocationView, problems: Problems) => void,
): void {
  checkInvocations(ctx, name, [inv], ([view], problems) => verify(view!, problems));
}
