"use client";

import { useState, type FormEvent, type ReactNode } from "react";
import { Button, SubmitButton, type StepState } from "./button";
import { actionsColumn, type Column } from "./data-table";

/**
 * A table whose rows are edited in place, one at a time (policies, retention): which row is open, its Edit
 * button (only for those who may edit), and what the last edit did, for the page's notice.
 */
export function useRowEdit<T>(keyOf: (row: T) => string, canEdit: boolean) {
  const [editing, setEditing] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  /** The edit is over: saved (what it did, in words) or cancelled (""). */
  const done = (message: string) => {
    setEditing(null);
    setNotice(message || null);
  };
  return {
    notice,
    /** The last column: Edit, named for screen readers by `label`. */
    column: (label: (row: T) => string): Column<T> =>
      actionsColumn((row) =>
        canEdit ? (
          <Button
            size="sm"
            onClick={() => {
              setNotice(null);
              setEditing(keyOf(row));
            }}
            aria-label={label(row)}
          >
            Edit
          </Button>
        ) : null,
      ),
    /** For the table's `row.render`: the open row drawn by `editor`, the others from the columns. */
    render:
      (editor: (row: T, done: (message: string) => void) => ReactNode) =>
      (row: T): ReactNode | undefined =>
        editing === keyOf(row) ? editor(row, done) : undefined,
  };
}

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
