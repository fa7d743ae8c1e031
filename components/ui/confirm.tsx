"use client";

import type { ReactNode } from "react";
import type { ButtonProps, StepState } from "./button";
import { Dialog, DialogActions, DialogButton } from "./dialog";
import { ErrorAlert } from "./error-alert";

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

/**
 * A button for a step that cannot be undone (revoke, delete, deactivate, rotate): it asks first, then acts.
 * `act` runs the step (a mutation's `mutateAsync`); the question closes once it has succeeded, and stays open
 * with the server's refusal when it failed. `step` is that mutation, read for its progress and its error.
 */
export function ConfirmButton({
  title,
  description,
  confirmLabel,
  step,
  act,
  variant = "dangerGhost",
  ...button
}: Omit<ButtonProps, "onClick" | "title"> & {
  title: string;
  description: ReactNode;
  confirmLabel: string;
  step: StepState & { reset: () => void };
  act: () => Promise<unknown>;
}) {
  return (
    <DialogButton
      variant={variant}
      onOpen={step.reset}
      dialog={({ onClose, onDone }) => (
        <ConfirmDialog
          title={title}
          description={description}
          confirmLabel={confirmLabel}
          pending={step.isPending}
          error={step.error}
          // A refusal is the step's error, shown in the dialog, which stays open.
          onConfirm={() =>
            act().then(
              () => onDone(),
              () => undefined,
            )
          }
          onCancel={onClose}
        />
      )}
      {...button}
    />
  );
}
