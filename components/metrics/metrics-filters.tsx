import Link from "next/link";
import type { ReactNode } from "react";
import { apiQuery, presets, type MetricsParams } from "./range";

// The time-range picker and the tool and runtime filters: plain links and a
// GET form, so every view is a URL that can be shared or bookmarked.

const control = "rounded-md border border-slate-300 px-2 py-1 text-sm";

/** A small control with its label above it, the label wrapping it. */
function Labelled({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="flex flex-col text-xs text-slate-600">
      {label}
      {children}
    </label>
  );
}

export function MetricsFilters({
  params,
  runtimes,
  tools,
  from,
  to,
}: {
  params: MetricsParams;
  runtimes: string[];
  tools: string[];
  from: Date;
  to: Date;
}) {
  const href = (range: string) => {
    const q = new URLSearchParams({ range });
    if (params.tool) q.set("tool", params.tool);
    if (params.runtime) q.set("runtime", params.runtime);
    return `/metrics?${q}`;
  };
  return (
    <div className="flex flex-wrap items-end gap-4">
      <nav aria-label="Time range" className="flex rounded-md border border-slate-300 bg-white text-sm shadow-sm">
        {Object.keys(presets).map((p) => (
          <Link
            key={p}
            href={href(p)}
            aria-current={params.range === p ? "page" : undefined}
            className={`px-3 py-1.5 ${params.range === p ? "bg-slate-900 text-white" : "text-slate-700 hover:bg-slate-50"}`}
          >
            {p}
          </Link>
        ))}
      </nav>
      <form method="get" action="/metrics" className="flex flex-wrap items-end gap-3 text-sm">
        <input type="hidden" name="range" value="custom" />
        <Labelled label="From (UTC day)">
          <input type="date" name="from" defaultValue={params.from} required className={control} />
        </Labelled>
        <Labelled label="To (included)">
          <input type="date" name="to" defaultValue={params.to} required className={control} />
        </Labelled>
        <Labelled label="Tool">
          <input
            name="tool"
            list="metrics-tools"
            defaultValue={params.tool}
            placeholder="any"
            className={`w-40 ${control}`}
          />
        </Labelled>
        <datalist id="metrics-tools">
          {tools.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <Labelled label="Runtime">
          <select name="runtime" defaultValue={params.runtime} className={control}>
            <option value="">any</option>
            {runtimes.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Labelled>
        <button
          type="submit"
          className="rounded-md border border-slate-300 bg-white px-3 py-1.5 font-medium shadow-sm hover:bg-slate-50"
        >
          Apply
        </button>
      </form>
      <a
        href={`/api/v1/metrics?${apiQuery(from, to, params.tool, params.runtime, { format: "csv" })}`}
        className="ml-auto text-sm font-medium text-slate-700 underline"
      >
        Export CSV
      </a>
    </div>
  );
}
