"use client";

import { Check, Copy } from "lucide-react";
import { useState } from "react";
import { elideId, ID_TAIL, SHORT_HEAD } from "./elide-id";

/**
 * An invocation id as the console shows it: elided when long (elideId), the whole id in the tooltip and for screen
 * readers and text search, and with `copy` a small button that copies the whole id. Links around it keep the whole id.
 */
export function InvocationId({
  id,
  copy = false,
  short = false,
  className,
}: {
  id: string;
  copy?: boolean;
  /** For a narrow column (the queue's): a shorter head, the tail whole. */
  short?: boolean;
  className?: string;
}) {
  const shown = short ? elideId(id, SHORT_HEAD, ID_TAIL) : elideId(id);
  return (
    <span className={`inline-flex min-w-0 max-w-full items-center gap-1 font-mono ${className ?? ""}`} title={id}>
      {shown === id ? (
        <span className="min-w-0 break-all">{id}</span>
      ) : (
        <>
          <span aria-hidden="true" className="min-w-0 break-all" data-testid="elided-id">
            {shown}
          </span>
          <span className="sr-only">{id}</span>
        </>
      )}
      {copy ? <CopyId id={id} /> : null}
    </span>
  );
}

function CopyId({ id }: { id: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  return (
    <button
      type="button"
      className="inline-flex shrink-0 items-center rounded p-0.5 text-slate-500 hover:bg-slate-100 hover:text-slate-800 focus-visible:outline focus-visible:outline-2 focus-visible:outline-indigo-600"
      aria-label={copied === false ? "The browser would not copy: select the id by hand" : "Copy the invocation id"}
      title={copied ? "Copied" : copied === false ? "The browser would not copy" : "Copy the whole id"}
      onClick={async (event) => {
        // In a clickable row the copy is not also a click on the row.
        event.stopPropagation();
        try {
          await navigator.clipboard.writeText(id);
          setCopied(true);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? (
        <Check aria-hidden="true" className="h-3.5 w-3.5" />
      ) : (
        <Copy aria-hidden="true" className="h-3.5 w-3.5" />
      )}
    </button>
  );
}
