"use client";

import { useState, type FormEvent, type ReactNode } from "react";
import { Button, SubmitButton, type StepState } from "./button";
import { actionsColumn, Cell, type Column } from "./data-table";

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
 * The last cells of a row edited in place (a policy, a retention period): what saving will do, then Save, which
 * submits the row's form (its inputs sit in the other cells and name it with `form`), Cancel, the lesser
 * `reset` step when there is one, and under them what cannot be saved; `children` add to that last cell.
 */
export function RowEditActions({
  formId,
  onSubmit,
  saving,
  onCancel,
  what,
  reset,
  error,
  children,
}: {
  formId: string;
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
  saving: StepState;
  onCancel: () => void;
  what: string;
  reset?: { label: string; step: { isPending: boolean; mutate: () => void } } | null;
  error?: string | null;
  children?: ReactNode;
}) {
  return (
    <>
      <Cell className="text-xs text-slate-600">{what}</Cell>
      <Cell>
        <form id={formId} onSubmit={onSubmit} className="flex flex-wrap justify-end gap-2">
          <SubmitButton step={saving} pendingLabel="Saving…" size="sm">
            Save
          </SubmitButton>
          <Button size="sm" onClick={onCancel}>
            Cancel
          </Button>
          {reset ? (
            <Button size="sm" variant="dangerGhost" onClick={() => reset.step.mutate()} disabled={reset.step.isPending}>
              {reset.label}
            </Button>
          ) : null}
        </form>
        {error ? (
          <p role="alert" className="mt-1 text-right text-xs text-rose-800">
            {error}
          </p>
        ) : null}
        {children}
      </Cell>
    </>
  );
}
