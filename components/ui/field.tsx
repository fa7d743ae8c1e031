import {
  useId,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
} from "react";

// Labelled form controls: every input has a visible label tied to it.

export type Option = { value: string; label: string };

/** A value the URL holds that no option names (a shared link, a hand-edited query) stays visible, not dropped. */
export function withCurrent(options: Option[], current: string | undefined): Option[] {
  return current && !options.some((o) => o.value === current)
    ? [...options, { value: current, label: current }]
    : options;
}

const control = "w-full rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm shadow-sm disabled:bg-slate-50";

/** A label tied to its control by an id (the control's own, or one made here), and a hint under it. */
function Field({
  label,
  hint,
  id,
  children,
}: {
  label: string;
  hint?: ReactNode;
  id?: string;
  children: (id: string) => ReactNode;
}) {
  const made = useId();
  const controlId = id ?? made;
  return (
    <div className="space-y-1">
      <label htmlFor={controlId} className="block text-sm font-medium text-slate-800">
        {label}
      </label>
      {children(controlId)}
      {hint ? <p className="text-xs text-slate-500">{hint}</p> : null}
    </div>
  );
}

type Labelled = { label: string; hint?: ReactNode };

export function TextField({ label, hint, ...rest }: InputHTMLAttributes<HTMLInputElement> & Labelled) {
  return (
    <Field label={label} hint={hint} id={rest.id}>
      {(id) => <input id={id} className={control} {...rest} />}
    </Field>
  );
}

/** `code`: a monospaced editor for JSON, unwrapped, without the browser's spelling marks. */
export function TextArea({
  label,
  hint,
  code = false,
  ...rest
}: TextareaHTMLAttributes<HTMLTextAreaElement> & Labelled & { code?: boolean }) {
  const look = code
    ? `${control} whitespace-pre font-mono text-xs leading-5 aria-[invalid=true]:border-rose-500`
    : control;
  return (
    <Field label={label} hint={hint} id={rest.id}>
      {(id) => <textarea id={id} rows={3} className={look} spellCheck={code ? false : undefined} {...rest} />}
    </Field>
  );
}

export function SelectField({
  label,
  hint,
  options,
  ...rest
}: SelectHTMLAttributes<HTMLSelectElement> & Labelled & { options: Option[] }) {
  return (
    <Field label={label} hint={hint} id={rest.id}>
      {(id) => (
        <select id={id} className={control} {...rest}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
