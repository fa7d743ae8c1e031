import Link from "next/link";
import type { GuardRefusal, TaskGuardRefusal } from "@/lib/invocations/schemas";
import { invocationHref, taskHref } from "@/lib/invocations/links";
import { formatUtc } from "@/components/audit/time";
import { InvocationId } from "../ui/invocation-id";

// The guard's refusals where a person reads a call or a task: a run that asked again for an intent that was
// committed, unknown or in flight was answered "no" without a call. The quick start's "a refused duplicate"
// is one of these; without them the page shows one clean invocation and the refusal nowhere.

const because: Record<GuardRefusal["reason"], string> = {
  already_committed: "it was already committed",
  outcome_unknown: "its outcome was unknown",
  in_flight: "it was still in flight",
  possible_duplicate: "a possible duplicate of",
};

const times = (n: number) => (n === 1 ? "once" : `${n} times`);

function Frame({ children, testId }: { children: React.ReactNode; testId: string }) {
  return (
    <section
      aria-labelledby={`${testId}-heading`}
      data-testid={testId}
      className="space-y-1 rounded-lg border border-slate-200 bg-white p-4 text-sm"
    >
      <h2 id={`${testId}-heading`} className="font-semibold">
        Refused by the guard
      </h2>
      <ul className="space-y-1 text-slate-700">{children}</ul>
    </section>
  );
}

/** On an invocation's page: calls under its own key the guard refused because of it. */
export function InvocationGuardRefusals({ refusals, runtime }: { refusals: GuardRefusal[]; runtime: string }) {
  if (refusals.length === 0) return null;
  return (
    <Frame testId="guard-refusals">
      {refusals.map((r) => (
        <li key={`${r.reason}:${r.task_id}`}>
          Another call of this intent was refused {times(r.refused)}, since {because[r.reason]} (last at{" "}
          {formatUtc(r.last_at)} UTC
          {r.task_id ? (
            <>
              , task{" "}
              <Link href={taskHref(r.task_id, runtime)} className="font-mono text-xs text-indigo-700 hover:underline">
                {r.task_id}
              </Link>
            </>
          ) : null}
          ). Nothing was called.
        </li>
      ))}
    </Frame>
  );
}

/** On a task's page: every call of the task the guard refused, and the invocation that blocked it. */
export function TaskGuardRefusals({ refusals, runtime }: { refusals: TaskGuardRefusal[]; runtime: string }) {
  if (refusals.length === 0) return null;
  return (
    <Frame testId="task-guard-refusals">
      {refusals.map((r) => {
        const blocking = (
          <Link
            href={invocationHref(r.invocation_id, runtime)}
            className="font-mono text-xs text-indigo-700 hover:underline"
          >
            <InvocationId id={r.invocation_id} />
          </Link>
        );
        return (
          <li key={`${r.reason}:${r.invocation_id}:${r.idempotency_key}`}>
            A call under key <span className="break-all font-mono text-xs">{r.idempotency_key}</span> was refused{" "}
            {times(r.refused)} (last at {formatUtc(r.last_at)} UTC):{" "}
            {r.reason === "possible_duplicate" ? (
              <>a possible duplicate of {blocking}</>
            ) : (
              <>
                {blocking} blocked it, since {because[r.reason]}
              </>
            )}
            . Nothing was called.
          </li>
        );
      })}
    </Frame>
  );
}
