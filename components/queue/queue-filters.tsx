"use client";

import { useEffect, useId, useRef, useState, type Ref } from "react";
import { Button } from "../ui/button";
import { withCurrent, type Option } from "../ui/field";
import { ageFilterOptions, effectClassOptions, isFiltered, statusOptions, type QueueFilterState } from "./filters";
import type { QueueFilterKey } from "@/lib/queue/filters";

type Props = {
  filters: QueueFilterState;
  runtimes: string[];
  tools: string[];
  searchRef: Ref<HTMLInputElement>;
  onChange: (patch: Partial<Record<QueueFilterKey, string | undefined>>, how?: "push" | "replace") => void;
  onClear: () => void;
};

const control = "rounded-md border border-slate-300 bg-white px-2 py-1.5 text-sm shadow-sm";

function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string | undefined;
  options: Option[];
  onChange: (v: string) => void;
}) {
  const id = useId();
  return (
    <div className="flex flex-col gap-0.5">
      <label htmlFor={id} className="text-xs font-medium text-slate-600">
        {label}
      </label>
      <select id={id} className={control} value={value ?? ""} onChange={(e) => onChange(e.target.value)}>
        {withCurrent(options, value).map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Text that filters as you type, written to the URL once typing pauses, and kept in step with back/forward. */
function useDebouncedText(value: string | undefined, commit: (v: string) => void, ms = 300) {
  const [text, setText] = useState(value ?? "");
  const [seen, setSeen] = useState(value);
  const commitRef = useRef(commit);
  useEffect(() => {
    commitRef.current = commit;
  });
  if (seen !== value) {
    setSeen(value);
    setText(value ?? "");
  }
  useEffect(() => {
    if (text === (value ?? "")) return;
    const t = setTimeout(() => commitRef.current(text), ms);
    return () => clearTimeout(t);
  }, [text, value, ms]);
  return [text, setText] as const;
}

export function QueueFilters({ filters, runtimes, tools, searchRef, onChange, onClear }: Props) {
  const searchId = useId();
  const toolId = useId();
  const toolsListId = useId();
  const [q, setQ] = useDebouncedText(filters.q, (v) => onChange({ q: v || undefined }, "replace"));
  const [tool, setTool] = useDebouncedText(filters.tool, (v) => onChange({ tool: v || undefined }, "replace"), 500);
  const set = (key: QueueFilterKey) => (v: string) => onChange({ [key]: v || undefined });

  return (
    <form
      role="search"
      aria-label="Filter the queue"
      className="flex flex-wrap items-end gap-3"
      onSubmit={(e) => e.preventDefault()}
    >
      <div className="flex min-w-[12rem] flex-1 flex-col gap-0.5">
        <label htmlFor={searchId} className="text-xs font-medium text-slate-600">
          Search <kbd className="ml-1 rounded border border-slate-300 px-1 font-mono text-[10px] text-slate-500">/</kbd>
        </label>
        <div className="relative">
          <svg
            aria-hidden="true"
            viewBox="0 0 16 16"
            className="pointer-events-none absolute left-2 top-2.5 h-4 w-4 fill-none stroke-slate-400 stroke-2"
          >
            <circle cx="7" cy="7" r="4.5" />
            <path d="m10.5 10.5 3.5 3.5" strokeLinecap="round" />
          </svg>
          <input
            ref={searchRef}
            id={searchId}
            type="search"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Escape") (e.target as HTMLInputElement).blur();
            }}
            placeholder="Task, invocation or key"
            className={`${control} w-full pl-8`}
            autoComplete="off"
          />
        </div>
      </div>
      <Select label="Status" value={filters.status} options={statusOptions} onChange={set("status")} />
      <Select
        label="Effect class"
        value={filters.effect_class}
        options={effectClassOptions}
        onChange={set("effect_class")}
      />
      <Select label="Age" value={filters.age} options={ageFilterOptions} onChange={set("age")} />
      <Select
        label="Assignee"
        value={filters.assignee}
        options={[
          { value: "", label: "Anyone" },
          { value: "me", label: "Me" },
          { value: "none", label: "Unassigned" },
        ]}
        onChange={set("assignee")}
      />
      <Select
        label="Runtime"
        value={filters.runtime}
        options={[{ value: "", label: "Any runtime" }, ...runtimes.map((r) => ({ value: r, label: r }))]}
        onChange={set("runtime")}
      />
      <div className="flex flex-col gap-0.5">
        <label htmlFor={toolId} className="text-xs font-medium text-slate-600">
          Tool
        </label>
        <input
          id={toolId}
          list={toolsListId}
          value={tool}
          onChange={(e) => setTool(e.target.value)}
          placeholder="Any tool"
          className={`${control} w-36`}
          autoComplete="off"
        />
        <datalist id={toolsListId}>
          {tools.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
      </div>
      {isFiltered(filters) ? (
        <Button onClick={onClear} variant="ghost" className="mb-0.5">
          Clear filters
        </Button>
      ) : null}
    </form>
  );
}
