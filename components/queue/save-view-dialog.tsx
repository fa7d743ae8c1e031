"use client";

import type { FormEvent } from "react";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { TextField } from "../ui/field";

export function SaveViewDialog({ query, error, saving, onSave, onClose }: { query: string; error: string | null; saving: boolean; onSave: (name: string) => void; onClose: () => void }) {
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    onSave(String(new FormData(e.currentTarget).get("name") ?? ""));
  };
  return (
    <Dialog open onOpenChange={(o) => (o ? null : onClose())} title="Save this view" description="Saves the current filters under a name, for you only. A name you already use is updated.">
      <form onSubmit={submit} className="space-y-4">
        <TextField label="Name" name="name" required maxLength={80} autoFocus />
        <p className="break-all font-mono text-xs text-slate-500">?{decodeURIComponent(query)}</p>
        {error ? <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-800">{error}</p> : null}
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={saving}>Save</Button>
        </div>
      </form>
    </Dialog>
  );
}
