"use client";

import { useRef, type ReactNode } from "react";
import { Button } from "../ui/button";
import { Dialog } from "../ui/dialog";
import { CopyButton } from "./copy-button";

/**
 * A secret shown in this dialog and never again (Settle keeps only a hash, or,
 * for a webhook signing secret, keeps it but never shows it: `note` says which).
 * Closing asks nothing more: the warning is in the dialog itself.
 */
export function ShownOnceDialog({
  title,
  label,
  secret,
  onClose,
  note = "Copy it now. It is shown only this once: Settle stores only a hash of it and cannot show it again.",
  children,
}: {
  title: string;
  label: string;
  secret: string;
  onClose: () => void;
  note?: string;
  children?: ReactNode;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <Dialog
      open
      onOpenChange={(open) => (open ? null : onClose())}
      title={title}
      description={<span className="font-medium text-amber-900">{note}</span>}
    >
      <div className="space-y-4">
        <div className="space-y-1">
          <label htmlFor="shown-once-secret" className="block text-sm font-medium text-slate-800">
            {label}
          </label>
          <div className="flex items-center gap-2">
            <input
              id="shown-once-secret"
              ref={input}
              readOnly
              value={secret}
              onFocus={(e) => e.currentTarget.select()}
              data-testid="shown-once-secret"
              className="w-full rounded-md border border-slate-300 bg-slate-50 px-3 py-1.5 font-mono text-sm"
            />
          </div>
          <CopyButton text={secret} onFallback={() => input.current?.select()} />
        </div>
        {children}
        <div className="flex justify-end">
          <Button variant="primary" onClick={onClose}>
            I have copied it
          </Button>
        </div>
      </div>
    </Dialog>
  );
}

/** A command to paste into a terminal, shown as text, with its own copy button. */
export function CommandExample({ label, command }: { label: string; command: string }) {
  return (
    <div className="space-y-1">
      <p className="text-sm font-medium text-slate-800">{label}</p>
      <pre className="max-h-48 overflow-auto whitespace-pre-wrap break-all rounded-md bg-slate-900 p-3 font-mono text-xs text-slate-100">
        {command}
      </pre>
      <CopyButton text={command} label="Copy command" />
    </div>
  );
}
