import Link from "next/link";

// An id that several runtimes use: the operator picks which one they mean.

export function RuntimeChoice({
  kind,
  id,
  runtimes,
  hrefFor,
}: {
  kind: "invocation" | "task";
  id: string;
  runtimes: string[];
  hrefFor: (runtime: string) => string;
}) {
  return (
    <main className="mx-auto max-w-3xl space-y-4 px-6 py-10">
      <h1 className="text-lg font-semibold">
        Which runtime’s {kind}? <span className="break-all font-mono text-base font-normal">{id}</span>
      </h1>
      <p className="text-sm text-slate-700">
        {runtimes.length} runtimes report a {kind} with this id. They are different{" "}
        {kind === "task" ? "tasks" : "invocations"}: pick the one you mean.
      </p>
      <ul className="space-y-2">
        {runtimes.map((r) => (
          <li key={r}>
            <Link
              href={hrefFor(r)}
              className="inline-block rounded-md border border-slate-300 bg-white px-3 py-2 font-mono text-sm text-indigo-700 hover:bg-slate-50"
            >
              {r}
            </Link>
          </li>
        ))}
      </ul>
    </main>
  );
}
