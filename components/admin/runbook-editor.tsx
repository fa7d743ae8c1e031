"use client";

import { useState } from "react";
import type { ToolCatalogItem } from "@/lib/catalog/catalog";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { FormDialog, type DialogProps } from "../ui/dialog";
import { TextArea, TextField } from "../ui/field";
import { CatalogCellEditor } from "./catalog-cell-editor";
import { useCollectionMutation } from "./use-collection";

// What a call of this tool was and where to check it (lib/catalog/templates.ts): the one-line summary every queue
// row shows, the link to the system where the effect can be looked up, and short steps. Empty fields clear them.

type Texts = { summary: string; runbook_url: string; runbook: string };

export function describeTexts(e: ToolCatalogItem): string {
  const parts = [e.summary ? "summary" : null, e.runbook_url ? "link" : null, e.runbook ? "steps" : null];
  const set = parts.filter(Boolean);
  return set.length === 0 ? "first arguments" : set.join(", ");
}

function RunbookDialog({ entry, onClose, onDone }: { entry: ToolCatalogItem } & DialogProps<string>) {
  const [values, setValues] = useState<Texts>({
    summary: entry.summary ?? "",
    runbook_url: entry.runbook_url ?? "",
    runbook: entry.runbook ?? "",
  });
  const change = useCollectionMutation(queryKeys.admin.toolCatalog, {
    mutationFn: (body: { [K in keyof Texts]: string | null }) =>
      api.patch("/api/v1/admin/tool-catalog/{entry_id}", { params: { entry_id: entry.id }, body }),
    onSuccess: (e) => onDone(`${e.pattern}: calls are summarised by ${describeTexts(e)}.`),
  });
  const text = (v: string) => (v.trim() === "" ? null : v.trim());
  /** A text field's name, its value here, and what keeps the two in step. */
  const bind = (name: keyof Texts) => ({
    name,
    value: values[name],
    onChange: (e: { target: { value: string } }) => setValues((v) => ({ ...v, [name]: e.target.value })),
  });
  return (
    <FormDialog
      title={`Summary and runbook for ${entry.pattern}`}
      description="What a person sees of each call of this tool in the queue and on its page, and where they check it. Placeholders: {{args.<path>}}, {{idempotency_key}}, {{tool}}. Shown as plain text."
      submitLabel="Save"
      pendingLabel="Saving…"
      step={change}
      onSubmit={() =>
        change.mutate({
          summary: text(values.summary),
          runbook_url: text(values.runbook_url),
          runbook: text(values.runbook),
        })
      }
      onClose={onClose}
    >
      <TextField
        label="Summary"
        {...bind("summary")}
        maxLength={200}
        placeholder="{{args.amount}} {{args.currency}} to {{args.customer}}"
        hint="One line, at most 200 characters. Empty: the call's first few arguments."
      />
      <TextField
        label="Where to check it (link)"
        {...bind("runbook_url")}
        type="url"
        placeholder="https://dashboard.example.com/refunds?q={{idempotency_key}}"
        hint="http(s) only; the scheme and host are fixed, each value is URL-encoded."
      />
      <TextArea
        label="Steps"
        {...bind("runbook")}
        maxLength={2000}
        placeholder="Search refunds by the key. A refund listed there means it happened."
      />
    </FormDialog>
  );
}

export function RunbookEditor({ entry, onChanged }: { entry: ToolCatalogItem; onChanged: (message: string) => void }) {
  return (
    <CatalogCellEditor
      text={describeTexts(entry)}
      isSet={Boolean(entry.summary || entry.runbook_url || entry.runbook)}
      label={`Edit the summary and runbook of ${entry.pattern}`}
      onChanged={onChanged}
      dialog={(props) => <RunbookDialog entry={entry} {...props} />}
    />
  );
}
