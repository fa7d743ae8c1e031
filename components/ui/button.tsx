import type { AnchorHTMLAttributes, ButtonHTMLAttributes } from "react";

const variants = {
  primary: "bg-slate-900 text-white hover:bg-slate-800 disabled:bg-slate-400",
  secondary: "border border-slate-300 bg-white text-slate-800 hover:bg-slate-50 disabled:text-slate-400",
  danger: "bg-rose-700 text-white hover:bg-rose-800 disabled:bg-rose-300",
  ghost: "text-slate-700 hover:bg-slate-100 disabled:text-slate-400",
  dangerGhost: "text-rose-700 hover:bg-rose-50 disabled:text-rose-300",
} as const;

const sizes = { sm: "px-2 py-1 text-xs", md: "px-3 py-1.5 text-sm" } as const;

export type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: keyof typeof variants;
  size?: keyof typeof sizes;
};

const look = (variant: keyof typeof variants, size: keyof typeof sizes, className: string) =>
  `inline-flex items-center justify-center gap-1.5 rounded-md font-medium shadow-sm transition-colors disabled:cursor-not-allowed ${variants[variant]} ${sizes[size]} ${className}`;

export function Button({ variant = "secondary", size = "md", className = "", type = "button", ...rest }: ButtonProps) {
  return <button type={type} className={look(variant, size, className)} {...rest} />;
}

/**
 * A file the browser saves (an evidence pack): a link that looks like a button. A link, not a fetch, so the
 * browser downloads it with the session's cookie like any page.
 */
export function DownloadLink({
  href,
  variant = "secondary",
  size = "md",
  className = "",
  ...rest
}: AnchorHTMLAttributes<HTMLAnchorElement> & {
  href: string;
  variant?: keyof typeof variants;
  size?: keyof typeof sizes;
}) {
  return <a href={href} download className={look(variant, size, className)} {...rest} />;
}

/** The state of a step a button or dialog runs: a TanStack mutation, or the same two facts from elsewhere. */
export type StepState = { isPending: boolean; error: unknown };

/** A form's submit button: disabled and relabelled while its step runs. */
export function SubmitButton({
  step,
  pendingLabel,
  children,
  variant = "primary",
  ...rest
}: Omit<ButtonProps, "type"> & { step: StepState; pendingLabel: string }) {
  return (
    <Button type="submit" variant={variant} disabled={step.isPending} {...rest}>
      {step.isPending ? pendingLabel : children}
    </Button>
  );
}
