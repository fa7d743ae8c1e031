"use client";

import { useState, type FormEvent } from "react";
import type { ToolCatalogItem } from "@/lib/catalog/catalog";
import type { CatalogEntryServed, VerifierServingView } from "@/lib/verify/liveness";
import { effectClassFor } from "@/lib/catalog/effect-class";
import { effectClasses } from "@/lib/outcome/queue-order";
import type { EffectClass } from "@/lib/outcome/vocabulary";
import { DEFAULT_VOLATILE_ARGS } from "@/lib/outcome/record-fields";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { SubmitButton } from "../ui/button";
import { ConfirmButton } from "../ui/confirm";
import { actionsColumn, DataTable, type Column } from "../ui/data-table";
import { fieldText } from "../ui/dialog";
import { ErrorAlert, errorText } from "../ui/error-alert";
import { SelectField, TextField } from "../ui/field";
import { EmptyState, PageSection, StateLabel } from "../ui/page";
import { useCollection, useCollectionMutation } from "./use-collection";
import { RunbookEditor } from "./runbook-editor";
import { VerifyEditor } from "./verify-editor";

const classOptions = effectClasses.map((c) => ({ value: c, label: c }));
const ALL = "";

function AddEntryForm({
  runtimes,
  runtime,
  onAdded,
}: {
  runtimes: string[];
  runtime: string;
  onAdded: (entry: ToolCatalogItem) => void;
}) {
  const add = useCollectionMutation(queryKeys.admin.toolCatalog, {
    mutationFn: (body: { runtime: string; pattern: string; effect_class: EffectClass }) =>
      api.post("/api/v1/admin/tool-catalog", { body }),
    onSuccess: onAdded,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    add.mutate(
      {
        runtime: String(form.get("runtime") ?? ""),
        pattern: fieldText(form, "pattern"),
        effect_class: String(form.get("effect_class") ?? "") as EffectClass,
      },
      { onSuccess: () => formElement.reset() },
    );
  };
  if (runtimes.length === 0) {
    return (
      <EmptyState>
        No runtimes yet. A runtime exists once it has a key (Admin → Runtime keys); then give its tools their effect
        classes here.
      </EmptyState>
    );
  }
  return (
    <form
      onSubmit={submit}
      aria-label="Add a catalog entry"
      className="grid gap-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm sm:grid-cols-[1fr_2fr_1fr_auto] sm:items-end"
    >
      <SelectField
        label="Runtime"
        name="runtime"
        defaultValue={runtime || runtimes[0]}
        key={runtime}
        options={runtimes.map((r) => ({ value: r, label: r }))}
      />
      <TextField
        label="Tool name or pattern"
        name="pattern"
        required
        maxLength={200}
        autoComplete="off"
        placeholder="charge_*"
      />
      <SelectField label="Effect class" name="effect_class" defaultValue="create" options={classOptions} />
      <SubmitButton step={add} pendingLabel="Adding…">
        Add entry
      </SubmitButton>
      <ErrorAlert error={add.error} look="box" className="sm:col-span-4" />
    </form>
  );
}

function ClassPicker({ entry, onChanged }: { entry: ToolCatalogItem; onChanged: (message: string) => void }) {
  const change = useCollectionMutation(queryKeys.admin.toolCatalog, {
    mutationFn: (effectClass: EffectClass) =>
      api.patch("/api/v1/admin/tool-catalog/{entry_id}", {
        params: { entry_id: entry.id },
        body: { effect_class: effectClass },
      }),
    onSuccess: (e) => onChanged(`${e.pattern} is now ${e.effect_class} for ${e.runtime}.`),
  });
  return (
    <>
      <select
        aria-label={`Effect class of ${entry.pattern}`}
        value={entry.effect_class}
        disabled={change.isPending}
        onChange={(event) => change.mutate(event.target.value as EffectClass)}
        className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm"
      >
        {classOptions.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
      {change.error ? (
        <span role="alert" className="ml-2 text-xs text-rose-700">
          {errorText(change.error)}
        </span>
      ) : null}
    </>
  );
}

/** "a, b" → ["a", "b"]; empty → null (Settle's default list). */
const volatileFromText = (text: string): string[] | null => {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return names.length > 0 ? names : null;
};
const DEFAULT_VOLATILE_TEXT = DEFAULT_VOLATILE_ARGS.join(", ");

function VolatileArgsEditor({ entry, onChanged }: { entry: ToolCatalogItem; onChanged: (message: string) => void }) {
  const saved = entry.volatile_args?.join(", ") ?? "";
  const [text, setText] = useState(saved);
  const change = useCollectionMutation(queryKeys.admin.toolCatalog, {
    mutationFn: (volatileArgs: string[] | null) =>
      api.patch("/api/v1/admin/tool-catalog/{entry_id}", {
        params: { entry_id: entry.id },
        body: { volatile_args: volatileArgs },
      }),
    onSuccess: (e) =>
      onChanged(
        e.volatile_args
          ? `${e.pattern}'s digest leaves out ${e.volatile_args.join(", ")}.`
          : `${e.pattern}'s digest leaves out Settle's default list again.`,
      ),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    change.mutate(volatileFromText(text));
  };
  return (
    <form onSubmit={submit} className="flex items-center gap-2">
      <input
        aria-label={`Volatile arguments of ${entry.pattern}`}
        value={text}
        onChange={(event) => setText(event.target.value)}
        placeholder={`default: ${DEFAULT_VOLATILE_TEXT}`}
        maxLength={3_500}
        className="w-64 rounded-md border border-slate-300 bg-white px-2 py-1 font-mono text-xs"
      />
      {text !== saved ? (
        <SubmitButton step={change} pendingLabel="Saving…" size="sm" variant="secondary">
          Save
        </SubmitButton>
      ) : null}
      {change.error ? (
        <span role="alert" className="text-xs text-rose-700">
          {errorText(change.error)}
        </span>
      ) : null}
    </form>
  );
}

function ToolCheck({ entries, runtime }: { entries: ToolCatalogItem[]; runtime: string }) {
  const [tool, setTool] = useState("");
  const own = entries.filter((e) => e.runtime === runtime);
  const found: EffectClass | null = tool ? effectClassFor(own, tool) : null;
  return (
    <div className="max-w-md space-y-1">
      <TextField
        label={`Check a tool name against ${runtime}'s catalog`}
        value={tool}
        onChange={(e) => setTool(e.target.value)}
        autoComplete="off"
        placeholder="charge_card"
      />
      {tool ? (
        <p role="status" className="text-sm text-slate-700">
          {found ? (
            <>
              {tool} is <strong>{found}</strong>.
            </>
          ) : (
            <>{tool} matches no entry: it counts as a write (a datastore tool from OpenTelemetry counts as a read).</>
          )}
        </p>
      ) : null}
    </div>
  );
}

/** Under a verifier: whether anyone serves it now (a worker's recent poll, or push), so a silent one is seen here. */
function ServingLine({ serving }: { serving: VerifierServingView }) {
  const last = serving.last_poll_at ? formatUtc(serving.last_poll_at) : null;
  return (
    <div className="mt-1 text-xs" data-testid="verifier-serving">
      {serving.running ? (
        <StateLabel state="running">
          {serving.push ? "(by webhook)" : `(${serving.worker ?? "a worker"} asked at ${last})`}
        </StateLabel>
      ) : (
        <StateLabel state="not_running">
          — no verifier is running for this runtime ({last ? `last poll ${last}` : "no worker has asked yet"}); its
          unknown calls go to a person
        </StateLabel>
      )}
    </div>
  );
}

export function ToolCatalogAdmin({ initial, runtimes }: { initial: CatalogEntryServed[]; runtimes: string[] }) {
  const [runtime, setRuntime] = useState<string>(ALL);
  const [notice, setNotice] = useState<string | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.toolCatalog,
    queryFn: () => api.get("/api/v1/admin/tool-catalog"),
    initialData: { items: initial },
    // Whether each verifier is served changes without anyone editing: read again now and then.
    refetchInterval: 15_000,
  });
  const remove = useCollectionMutation(queryKeys.admin.toolCatalog, {
    mutationFn: (entry: ToolCatalogItem) =>
      api.delete("/api/v1/admin/tool-catalog/{entry_id}", { params: { entry_id: entry.id } }),
    onSuccess: (_, entry) => setNotice(`Removed ${entry.pattern} from ${entry.runtime}.`),
  });
  // In the server's order: by runtime, each runtime's most specific entry first (the order they are tried in).
  const shown = data.items.filter((e) => runtime === ALL || e.runtime === runtime);
  const columns: Array<Column<CatalogEntryServed>> = [
    { header: "Runtime", className: "font-medium", cell: (e) => e.runtime },
    { header: "Tool name or pattern", className: "break-all mono", cell: (e) => e.pattern },
    { header: "Effect class", className: "nowrap", cell: (e) => <ClassPicker entry={e} onChanged={setNotice} /> },
    {
      header: "Volatile arguments",
      cell: (e) => <VolatileArgsEditor key={e.updated_at} entry={e} onChanged={setNotice} />,
    },
    {
      header: "Verifier",
      cell: (e) => (
        <>
          <VerifyEditor entry={e} onChanged={setNotice} />
          {e.serving ? <ServingLine serving={e.serving} /> : null}
        </>
      ),
    },
    { header: "Summary & runbook", cell: (e) => <RunbookEditor entry={e} onChanged={setNotice} /> },
    { header: "Changed", className: "nowrap", cell: (e) => formatUtc(e.updated_at, { seconds: false }) },
    actionsColumn((e) => (
      <ConfirmButton
        size="sm"
        aria-label={`Remove ${e.pattern} from ${e.runtime}`}
        title={`Remove ${e.pattern}?`}
        description={`${e.runtime}'s tools that match it take the next matching entry's class, or count as writes. The change is in the audit trail.`}
        confirmLabel="Remove entry"
        step={remove}
        act={() => remove.mutateAsync(e)}
      >
        Remove
      </ConfirmButton>
    )),
  ];

  return (
    <PageSection
      id="catalog-heading"
      title="Tool catalog"
      notice={notice}
      description={
        <>
          The effect class of each runtime&apos;s tools, for runtimes that do not send one: OpenTelemetry traces and the
          MCP gateway (<span className="font-mono">settle_catalog</span>). A pattern is a tool name, or one where{" "}
          <span className="font-mono">*</span> stands for any characters. The most specific entry that matches decides:
          an exact name first, then the pattern with more literal characters. A tool no entry matches counts as a write.
          Volatile arguments are the top-level argument names left out when Settle compares two calls&apos; arguments to
          catch a retry sent under a new idempotency key (comma-separated; empty: {DEFAULT_VOLATILE_TEXT}). A verifier
          lets Settle ask the runtime whether an unknown call took effect before a person is asked.
        </>
      }
    >
      <div className="flex flex-wrap items-end gap-6">
        <div className="w-64">
          <SelectField
            label="Show runtime"
            value={runtime}
            onChange={(e) => setRuntime(e.target.value)}
            options={[{ value: ALL, label: "All runtimes" }, ...runtimes.map((r) => ({ value: r, label: r }))]}
          />
        </div>
        {runtime !== ALL ? <ToolCheck entries={data.items} runtime={runtime} /> : null}
      </div>
      <AddEntryForm
        runtimes={runtimes}
        runtime={runtime}
        onAdded={(e) => setNotice(`Added ${e.pattern} → ${e.effect_class} for ${e.runtime}.`)}
      />
      <DataTable
        caption="Tool catalog entries"
        columns={columns}
        rows={shown}
        row={{ key: (e) => e.id, testId: "catalog-row" }}
        error={error}
        empty={
          <EmptyState>
            No entries{runtime === ALL ? "" : ` for ${runtime}`} yet: every tool of{" "}
            {runtime === ALL ? "every runtime" : "it"} that sends no effect class counts as a write.
          </EmptyState>
        }
      />
    </PageSection>
  );
}
