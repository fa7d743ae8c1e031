import type { FormEvent, ReactNode } from "react";
import { Button, SubmitButton, type StepState } from "./button";

/**
 * The last cell of a row edited in place (a policy, a retention period): Save submits the row's form (its
 * inputs sit in the other cells and name it with `form`), Cancel leaves it, `reset` is a lesser step, and what
 * cannot be saved is said under them.
 */
export function RowEditActions({
  formId,
  onSubmit,
  saving,
  onCancel,
  reset,
  error,
}: {
  formId: string;
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
  saving: StepState;
  onCancel: () => void;
  reset?: ReactNode;
  error?: string | null;
}) {
  return (
    <>
      <form id={formId} onSubmit={onSubmit} className="flex flex-wrap justify-end gap-2">
        <SubmitButton step={saving} pendingLabel="Saving…" size="sm">
          Save
        </SubmitButton>
        <Button size="sm" onClick={onCancel}>
          Cancel
        </Button>
        {reset}
      </form>
      {error ? (
        <p role="alert" className="mt-1 text-right text-xs text-rose-800">
          {error}
        </p>
      ) : null}
    </>
  );
}
