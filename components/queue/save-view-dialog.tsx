"use client";

import { FormDialog } from "../ui/dialog";
import { TextField } from "../ui/field";

export function SaveViewDialog({
  query,
  error,
  saving,
  onSave,
  onClose,
}: {
  query: string;
  error: string | null;
  saving: boolean;
  onSave: (name: string) => void;
  onClose: () => void;
}) {
  return (
    <FormDialog
      title="Save this view"
      description="Saves the current filters under a name, for you only. A name you already use is updated."
      submitLabel="Save"
      step={{ isPending: saving, error }}
      onSubmit={(form) => onSave(String(form.get("name") ?? ""))}
      onClose={onClose}
    >
      <TextField label="Name" name="name" required maxLength={80} autoFocus />
      <p className="break-all font-mono text-xs text-slate-500">?{decodeURIComponent(query)}</p>
    </FormDialog>
  );
}
