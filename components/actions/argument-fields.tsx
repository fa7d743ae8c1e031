"use client";

import { useId, useState, type ReactNode } from "react";
import type { Arguments } from "./edited-arguments";

// The quick way to change a call's arguments: one control per top-level member that is a string, a number or a
// yes/no (the amount, the currency, the note). Members that are objects, lists or null are edited in the JSON
// below. A number stays a number: text that is not one is pointed out and not taken.

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** A number as typed: a JSON number, an integer past 2^53 kept exact as a BigInt; null when it is not one. */
function readNumber(text: string): number | bigint | null {
  const t = text.trim();
  if (!NUMBER.test(t)) return null;
  const n = Number(t);
  if (/^-?\d+$/.test(t) && !Number.isSafeInteger(n)) return BigInt(t);
  return Number.isFinite(n) ? n : null;
}

const control = "w-full rounded-md border border-slate-300 bg-white px-2 py-1 font-mono text-xs shadow-sm";

function NumberField({
  id,
  value,
  onChange,
}: {
  id: string;
  value: number | bigint;
  onChange: (v: number | bigint) => void;
}) {
  // What is typed, kept while it is not yet a number ("5." on the way to "5.5"); the JSON's value otherwise.
  const [draft, setDraft] = useState<string | null>(null);
  const shown = draft ?? String(value);
  const bad = draft !== null && readNumber(draft) === null;
  return (
    <input
      id={id}
      inputMode="decimal"
      className={`${control} ${bad ? "border-rose-500" : ""}`}
      aria-invalid={bad}
      value={shown}
      onChange={(event) => {
        const n = readNumber(event.target.value);
        setDraft(n === null ? event.target.value : null);
        if (n !== null) onChange(n);
      }}
      onBlur={() => setDraft(null)}
    />
  );
}

function Field({ name, value, onChange }: { name: string; value: unknown; onChange: (v: unknown) => void }) {
  const id = useId();
  let input: ReactNode;
  if (typeof value === "string") {
    input = <input id={id} className={control} value={value} onChange={(e) => onChange(e.target.value)} />;
  } else if (typeof value === "number" || typeof value === "bigint") {
    input = <NumberField id={id} value={value} onChange={onChange} />;
  } else if (typeof value === "boolean") {
    input = (
      <span className="flex items-center gap-2 text-xs text-slate-700">
        <input id={id} type="checkbox" checked={value} onChange={(e) => onChange(e.target.checked)} />
        {value ? "true" : "false"}
      </span>
    );
  } else {
    return null;
  }
  return (
    <div className="contents">
      <label htmlFor={id} className="truncate pt-1 font-mono text-xs text-slate-700" title={name}>
        {name}
      </label>
      {input}
    </div>
  );
}

const editable = (v: unknown) => ["string", "number", "bigint", "boolean"].includes(typeof v);

/** One control per editable top-level member of `value`; each change hands the whole new object to `onChange`. */
export function ArgumentFields({ value, onChange }: { value: Arguments; onChange: (next: Arguments) => void }) {
  const names = Object.keys(value).filter((k) => editable(value[k]));
  if (names.length === 0) return null;
  return (
    <fieldset className="space-y-1" data-testid="argument-fields">
      <legend className="text-sm font-medium text-slate-800">Fields</legend>
      <div className="grid grid-cols-[minmax(5rem,9rem)_1fr] items-start gap-x-2 gap-y-1.5">
        {names.map((k) => (
          <Field key={k} name={k} value={value[k]} onChange={(v) => onChange({ ...value, [k]: v })} />
        ))}
      </div>
    </fieldset>
  );
}
