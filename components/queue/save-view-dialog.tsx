"use client";

import type { FormEvent } from "react";
import { Dialog, DialogActions } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
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
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    onSave(String(new FormData(e.currentTarget).get("name") ?? ""));
  };
  return (
    <Dialog
      open
      onOpenChange={(o) => (o ? null : onClose())}
      title="Save this view"
      description="Saves the current filters under a name, for you only. A name you already use is updated."
    >
      <form onSubmit={submit} className="space-y-4">
        <TextField label="Name" name="name" required maxLength={80} autoFocus />
        <p className="break-all font-mono text-xs text-slate-500">?{decodeURIComponent(query)}</p>
        <ErrorAlert error={error} look="box" />
        <DialogActions label="Save" pending={saving} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
