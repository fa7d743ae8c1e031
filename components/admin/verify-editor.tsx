"use client";

import { useState } from "react";
import type { ToolCatalogItem } from "@/lib/catalog/catalog";
import { describeVerify, suggestedVerifyConfig, type VerifyConfig } from "@/lib/outcome/verification";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { Button } from "../ui/button";
import { FormDialog, type DialogProps } from "../ui/dialog";
import { TextField } from "../ui/field";
import { CatalogCellEditor } from "./catalog-cell-editor";
import { useCollectionMutation } from "./use-collection";

// A catalog entry's verifier (decision 027): when a call of the tool becomes unknown, Settle asks the runtime
// to look the effect up. Off by default; the settings start from values that suit a payment API.

const fields: Array<{ name: keyof VerifyConfig; label: string; hint: string; max: number }> = [
  { name: "after_s", label: "First ask after (s)", hint: "after the call became unknown", max: 86_400 },
  { name: "every_s", label: "Ask again every (s)", hint: "while no answer settles it", max: 86_400 },
  { name: "max_tries", label: "Tries before a person decides", hint: "1–100", max: 100 },
  {
    name: "absent_after_s",
    label: "“Not found” counts after (s)",
    hint: "of the first dispatch: a read just after a write can miss it",
    max: 86_400,
  },
  { name: "lease_s", label: "A worker holds an ask for (s)", hint: "then another may take it", max: 86_400 },
];

function VerifyDialog({ entry, onClose, onDone }: { entry: ToolCatalogItem } & DialogProps<string>) {
  const [values, setValues] = useState<Record<keyof VerifyConfig, string>>(
    () =>
      Object.fromEntries(
        fields.map((f) => [f.name, String((entry.verify ?? suggestedVerifyConfig)[f.name])]),
      ) as Record<keyof VerifyConfig, string>,
  );
  const change = useCollectionMutation(queryKeys.admin.toolCatalog, {
    mutationFn: (verify: VerifyConfig | null) =>
      api.patch("/api/v1/admin/tool-catalog/{entry_id}", { params: { entry_id: entry.id }, body: { verify } }),
    onSuccess: (e) =>
      onDone(
        e.verify
          ? `${e.pattern}: Settle asks ${e.runtime}'s verifier ${describeVerify(e.verify)}.`
          : `${e.pattern}: no verifier; a person settles its unknown calls.`,
      ),
  });
  return (
    <FormDialog
      title={`Verifier for ${entry.pattern}`}
      description={`When a call of ${entry.pattern} in ${entry.runtime} becomes unknown or stalls, Settle asks the runtime's verifier (a worker of @settle/client or the Python client, or a webhook) whether the effect exists, and settles it on a clear answer. After the last try, a person decides.`}
      submitLabel="Save verifier"
      pendingLabel="Saving…"
      step={change}
      onSubmit={() =>
        change.mutate(Object.fromEntries(fields.map((f) => [f.name, Number(values[f.name])])) as VerifyConfig)
      }
      onClose={onClose}
      aside={
        entry.verify ? (
          <Button type="button" variant="dangerGhost" disabled={change.isPending} onClick={() => change.mutate(null)}>
            Turn off
          </Button>
        ) : null
      }
    >
      {fields.map((f) => (
        <TextField
          key={f.name}
          label={f.label}
          name={f.name}
          type="number"
          inputMode="numeric"
          min={1}
          max={f.max}
          step={1}
          required
          value={values[f.name]}
          onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
          hint={f.hint}
        />
      ))}
    </FormDialog>
  );
}

export function VerifyEditor({ entry, onChanged }: { entry: ToolCatalogItem; onChanged: (message: string) => void }) {
  return (
    <CatalogCellEditor
      text={describeVerify(entry.verify)}
      isSet={entry.verify !== null}
      label={`Edit the verifier of ${entry.pattern}`}
      onChanged={onChanged}
      dialog={(props) => <VerifyDialog entry={entry} {...props} />}
    />
  );
}
