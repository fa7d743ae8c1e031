"use client";

import { Check, Copy } from "lucide-react";
import { useState } from "react";
import { Button } from "../ui/button";

/** Copies `text`; where the browser refuses (plain http on another host), it says to copy by hand. */
export function CopyButton({
  text,
  label = "Copy",
  onFallback,
}: {
  text: string;
  label?: string;
  onFallback?: () => void;
}) {
  const [state, setState] = useState<"idle" | "copied" | "manual">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      onFallback?.();
      setState("manual");
    }
  };
  return (
    <span className="inline-flex items-center gap-2">
      <Button size="sm" onClick={copy} aria-label={`${label} to clipboard`}>
        {state === "copied" ? (
          <Check aria-hidden="true" className="h-3.5 w-3.5" />
        ) : (
          <Copy aria-hidden="true" className="h-3.5 w-3.5" />
        )}
        {state === "copied" ? "Copied" : label}
      </Button>
      <span role="status" className="text-xs text-slate-600">
        {state === "manual" ? "The browser would not copy: it is selected, press Ctrl+C (⌘C)." : null}
      </span>
    </span>
  );
}
