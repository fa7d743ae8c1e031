"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import type { FormEvent } from "react";
import { adminActions } from "@/lib/audit/admin-action-names";
import { allowedFrom, type ActionName } from "@/lib/outcome/transitions";
import { invocationStatuses } from "@/lib/outcome/status";
import { actionMeta } from "../actions/action-meta";
import { Button } from "../ui/button";
import { SelectField, TextField, withCurrent, type Option } from "../ui/field";
import type { AuditParams } from "./params";

// The audit filters live in the URL (bookmark it, send it to a colleague);
// the form is a plain GET form, so it works before the page's script loads.

const actionNames = Object.keys(allowedFrom) as ActionName[];
const human = (s: string) => s.charAt(0).toUpperCase() + s.slice(1).replaceAll("_", " ");
const any = { value: "", label: "Any" };
const actionOptions = [
  any,
  ...actionNames.map((a) => ({ value: a, label: actionMeta[a].label })),
  ...adminActions.map((a) => ({ value: a, label: `Admin: ${a.replaceAll("_", " ")}` })),
];
const statusOptions = [any, ...invocationStatuses.map((s) => ({ value: s, label: human(s) }))];

/** A date input when the URL holds a plain day; a text input for a full time someone typed into the URL. */
function DayField({ label, name, value, hint }: { label: string; name: string; value: string; hint: string }) {
  const plain = value === "" || /^\d{4}-\d{2}-\d{2}$/.test(value);
  return <TextField label={label} name={name} type={plain ? "date" : "text"} defaultValue={value} hint={hint} />;
}

export function AuditFilters({ params, runtimes }: { params: AuditParams; runtimes: string[] }) {
  const router = useRouter();
  const value = (name: string) => params[name] ?? "";
  // A value in the URL that is not in the list (a comma-separated one) is kept as an option, not silently dropped.
  const select = (label: string, name: string, options: Option[]) => (
    <SelectField label={label} name={name} defaultValue={value(name)} options={withCurrent(options, value(name))} />
  );

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [name, v] of new FormData(event.currentTarget)) {
      if (typeof v === "string" && v.trim() !== "") query.set(name, v.trim());
    }
    const qs = query.toString();
    router.push(qs ? `/audit?${qs}` : "/audit");
  };

  return (
    <form
      key={JSON.stringify(params)}
      method="get"
      action="/audit"
      onSubmit={submit}
      aria-label="Filter the audit trail"
      className="grid grid-cols-2 gap-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm md:grid-cols-3 lg:grid-cols-5"
    >
      <TextField label="Task or invocation" name="q" defaultValue={value("q")} placeholder="ord-7741 or inv-7f3" />
      <TextField label="Actor" name="actor" defaultValue={value("actor")} placeholder="ana@" hint="Part of an email" />
      {select("Action", "action", actionOptions)}
      {select("Runtime", "runtime", [any, ...runtimes.map((r) => ({ value: r, label: r }))])}
      <TextField label="Tool" name="tool" defaultValue={value("tool")} placeholder="create_invoice" hint="Exact name" />
      {select("From status", "from_status", statusOptions)}
      {select("To status", "to_status", statusOptions)}
      <DayField label="From (UTC)" name="from" value={value("from")} hint="From 00:00 UTC that day" />
      <DayField label="To (UTC)" name="to" value={value("to")} hint="Through the end of that day" />
      <div className="flex items-end gap-2 pb-5">
        <Button type="submit" variant="primary">
          Apply filters
        </Button>
        <Link
          href="/audit"
          className="rounded-md px-2 py-1.5 text-sm text-slate-700 underline-offset-2 hover:underline"
        >
          Clear
        </Link>
      </div>
    </form>
  );
}
