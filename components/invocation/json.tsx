import { stringifyExactJson } from "@/lib/json/exact";

/** A JSON value as text, for reading: redacted data only (what Settle stores), never rendered as HTML. */
export function Json({ value }: { value: unknown }) {
  return (
    <pre className="max-h-96 overflow-auto whitespace-pre-wrap break-all rounded-md bg-slate-900 p-3 font-mono text-xs text-slate-100">
      {stringifyExactJson(value, 2)}
    </pre>
  );
}
