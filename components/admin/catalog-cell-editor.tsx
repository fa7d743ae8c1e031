"use client";

import { useState, type ReactNode } from "react";
import { Button } from "../ui/button";

/** A catalog row's cell: what the setting is now, and an Edit button opening its dialog. */
export function CatalogCellEditor({
  text,
  isSet,
  label,
  dialog,
}: {
  text: string;
  /** Whether the entry sets it (else the text says the default, shown muted). */
  isSet: boolean;
  /** The button's accessible name, e.g. "Edit the verifier of create_refund". */
  label: string;
  dialog: (close: () => void) => ReactNode;
}) {
  const [open, setOpen] = useState(false);
  return (
    <div className="flex items-center gap-2 whitespace-nowrap">
      <span className={isSet ? "text-slate-800" : "text-slate-500"}>{text}</span>
      <Button size="sm" variant="ghost" onClick={() => setOpen(true)} aria-label={label}>
        Edit
      </Button>
      {open ? dialog(() => setOpen(false)) : null}
    </div>
  );
}
