"use client";

import Link from "next/link";
import { useParams, useSearchParams } from "next/navigation";

// The not-found page of an invocation or a task: what was asked for, and why
// it may not be here yet.

export function Missing({ kind }: { kind: "invocation" | "task" }) {
  const params = useParams<{ invocation_id?: string; task_id?: string }>();
  const runtime = useSearchParams().get("runtime");
  const raw = (kind === "task" ? params.task_id : params.invocation_id) ?? "";
  let id = raw;
  try {
    id = decodeURIComponent(raw);
  } catch {
    // A malformed escape: show it as it came.
  }
  return (
    <main className="mx-auto max-w-3xl space-y-3 px-6 py-10">
      <h1 className="text-lg font-semibold">No such {kind}</h1>
      <p className="text-sm text-slate-700">
        Settle has no {kind} <span className="break-all font-mono">{id}</span>
        {runtime ? (
          <>
            {" "}
            in runtime <span className="font-mono">{runtime}</span>
          </>
        ) : null}
        . Its runtime may not have reported it yet, or the link names another runtime.
      </p>
      <p className="text-sm">
        <Link href="/" className="text-indigo-700 hover:underline">
          Back to the queue
        </Link>
      </p>
    </main>
  );
}
