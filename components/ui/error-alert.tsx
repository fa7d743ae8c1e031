// A failed request, told the way Settle tells it: the error envelope's own
// message, announced to screen readers as it appears.

/** What to tell a person when a request failed: Settle's own explanation from the error envelope. */
export function errorText(error: unknown): string | null {
  if (!error) return null;
  return error instanceof Error ? error.message : "Something went wrong.";
}

const looks = {
  /** In a dialog or a form: a tinted box. */
  box: "rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-800",
  /** Under a list or a button: a line of text. */
  line: "text-sm text-rose-700",
} as const;

/**
 * Nothing while `error` is empty; otherwise its message (a string is shown as it is), after `prefix`
 * ("Could not refresh the list:") when there is one.
 */
export function ErrorAlert({
  error,
  prefix,
  look = "line",
  className,
}: {
  error: unknown;
  prefix?: string;
  look?: keyof typeof looks;
  className?: string;
}) {
  if (!error) return null;
  const text = typeof error === "string" ? error : errorText(error);
  return (
    <p role="alert" className={className ? `${looks[look]} ${className}` : looks[look]}>
      {prefix ? `${prefix} ` : null}
      {text}
    </p>
  );
}
