"use client";

import * as RadixDialog from "@radix-ui/react-dialog";
import { useState, type ReactNode } from "react";
import { Button, type ButtonProps, type StepState } from "./button";
import { ErrorAlert } from "./error-alert";

const widths = {
  normal: "w-[min(36rem,calc(100vw-2rem))]",
  wide: "w-[min(52rem,calc(100vw-2rem))]",
} as const;
export type DialogWidth = keyof typeof widths;

// An accessible modal (focus trapped, Escape closes, labelled by its title); taller than the window, it scrolls.
export function Dialog({
  open,
  onOpenChange,
  title,
  description,
  width = "normal",
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: ReactNode;
  /** wide: room for an editor beside what it changes (approve with edits). */
  width?: DialogWidth;
  children: ReactNode;
}) {
  return (
    <RadixDialog.Root open={open} onOpenChange={onOpenChange}>
      <RadixDialog.Portal>
        <RadixDialog.Overlay className="fixed inset-0 z-40 bg-slate-900/40" />
        <RadixDialog.Content
          className={`fixed left-1/2 top-24 z-50 max-h-[calc(100vh-7rem)] ${widths[width]} -translate-x-1/2 overflow-y-auto rounded-lg bg-white p-5 shadow-xl focus:outline-none`}
        >
          <RadixDialog.Title className="text-base font-semibold">{title}</RadixDialog.Title>
          {description ? (
            <RadixDialog.Description className="mt-1 text-sm text-slate-600">{description}</RadixDialog.Description>
          ) : null}
          <div className="mt-4">{children}</div>
        </RadixDialog.Content>
      </RadixDialog.Portal>
    </RadixDialog.Root>
  );
}

/**
 * How a dialog ends: Cancel, then the step it is for, disabled and relabelled while it runs. The step submits
 * the dialog's form, or, given `onConfirm`, is a button of its own (a confirmation has no form).
 */
export function DialogActions({
  label,
  pendingLabel,
  pending = false,
  disabled = false,
  variant = "primary",
  cancelLabel = "Cancel",
  onCancel,
  onConfirm,
}: {
  /** The step's label; null leaves only the way out (the step no longer applies). */
  label: string | null;
  pendingLabel?: string;
  pending?: boolean;
  /** Not yet possible (a choice is missing): the label stays, the button does nothing. */
  disabled?: boolean;
  variant?: "primary" | "danger";
  cancelLabel?: string;
  onCancel: () => void;
  onConfirm?: () => void;
}) {
  return (
    <div className="flex justify-end gap-2">
      <Button onClick={onCancel}>{cancelLabel}</Button>
      {label === null ? null : (
        <Button
          type={onConfirm ? "button" : "submit"}
          variant={variant}
          onClick={onConfirm}
          disabled={pending || disabled}
        >
          {pending && pendingLabel ? pendingLabel : label}
        </Button>
      )}
    </div>
  );
}

/** What a dialog a screen opens is told: how to close, and what to do with what it made or changed. */
export type DialogProps<T> = { onClose: () => void; onDone: (result: T) => void };

/**
 * A dialog that is a form: its fields, the server's refusal in place, and Cancel and the step. `onSubmit` gets
 * what was filled in (the browser's own checks have passed); `aside` is a second, lesser step at the left.
 */
export function FormDialog({
  title,
  description,
  submitLabel,
  pendingLabel,
  step,
  submitDisabled,
  cancelLabel,
  onSubmit,
  onClose,
  aside,
  width,
  children,
}: {
  title: string;
  description?: ReactNode;
  width?: DialogWidth;
  /** The step's label; null leaves only the way out (the step no longer applies). */
  submitLabel: string | null;
  pendingLabel?: string;
  step: StepState;
  submitDisabled?: boolean;
  cancelLabel?: string;
  onSubmit: (values: FormData, form: HTMLFormElement) => void;
  onClose: () => void;
  aside?: ReactNode;
  children: ReactNode;
}) {
  return (
    <Dialog
      open
      onOpenChange={(open) => (open ? null : onClose())}
      title={title}
      description={description}
      width={width}
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit(new FormData(event.currentTarget), event.currentTarget);
        }}
        className="space-y-4"
      >
        {children}
        <ErrorAlert error={step.error} look="box" />
        <div className="flex items-center justify-between gap-2">
          {aside ?? <span />}
          <DialogActions
            label={submitLabel}
            pendingLabel={pendingLabel}
            pending={step.isPending}
            disabled={submitDisabled}
            cancelLabel={cancelLabel}
            onCancel={onClose}
          />
        </div>
      </form>
    </Dialog>
  );
}

/** A form field's text, trimmed ("" when it is missing). */
export const fieldText = (values: FormData, name: string) => String(values.get(name) ?? "").trim();

/**
 * A button that opens a dialog: `dialog` draws it with a way out (`onClose`) and a way to finish (`onDone`),
 * which closes it and hands what it made or changed to this button's `onDone`.
 */
export function DialogButton<T = void>({
  dialog,
  onOpen,
  onDone,
  ...button
}: Omit<ButtonProps, "onClick"> & {
  dialog: (props: DialogProps<T>) => ReactNode;
  onOpen?: () => void;
  onDone?: (result: T) => void;
}) {
  const [open, setOpen] = useState(false);
  const close = () => setOpen(false);
  return (
    <>
      <Button
        onClick={() => {
          onOpen?.();
          setOpen(true);
        }}
        {...button}
      />
      {open
        ? dialog({
            onClose: close,
            onDone: (result) => {
              close();
              onDone?.(result);
            },
          })
        : null}
    </>
  );
}
