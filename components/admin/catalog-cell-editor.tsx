"use client";

import type { ReactNode } from "react";
import { DialogButton, type DialogProps } from "../ui/dialog";

/** A catalog row's cell: what the setting is now, and an Edit button opening its dialog. */
export function CatalogCellEditor({
  text,
  isSet,
  label,
  onChanged,
  dialog,
}: {
  text: string;
  /** Whether the entry sets it (else the text says the default, shown muted). */
  isSet: boolean;
  /** The button's accessible name, e.g. "Edit the verifier of create_refund". */
  label: string;
  /** What a saved change did, in words. */
  onChanged: (message: string) => void;
  dialog: (props: DialogProps<string>) => ReactNode;
}) {
  return (
    <div className="flex items-center gap-2 whitespace-nowrap">
      <span className={isSet ? "text-slate-800" : "text-slate-500"}>{text}</span>
      <DialogButton size="sm" variant="ghost" aria-label={label} dialog={dialog} onDone={onChanged}>
        Edit
      </DialogButton>
    </div>
  );
}
