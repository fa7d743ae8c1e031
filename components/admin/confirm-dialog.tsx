"use client";

import type { ReactNode } from "react";
import { Dialog, DialogActions } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";

/** Asks before a step that cannot be undone from here; shows the server's refusal in place. */
export function ConfirmDialog({
  title,
  description,
  confirmLabel,
  pending,
  error,
  onConfirm,
  onCancel,
}: {
  title: string;
  description: ReactNode;
  confirmLabel: string;
  pending: boolean;
  /** The failed step's error, if it failed. */
  error: unknown;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Dialog open onOpenChange={(open) => (open ? null : onCancel())} title={title} description={description}>
      <div className="space-y-4">
        <ErrorAlert error={error} look="box" />
        <DialogActions
          label={confirmLabel}
          pendingLabel="Working…"
          pending={pending}
          variant="danger"
          onCancel={onCancel}
          onConfirm={onConfirm}
        />
      </div>
    </Dialog>
  );
}
