"use client";

import type { StepState } from "../ui/button";
import { ConfirmButton } from "../ui/confirm";

/** A runtime key's or an access token's Revoke: it asks first, saying what stops working, then revokes by prefix. */
export function RevokeButton({
  prefix,
  what,
  consequence,
  revoke,
}: {
  prefix: string;
  what: "key" | "token";
  consequence: string;
  revoke: StepState & { reset: () => void; mutateAsync: (prefix: string) => Promise<unknown> };
}) {
  return (
    <ConfirmButton
      size="sm"
      aria-label={`Revoke ${prefix}`}
      title={`Revoke ${prefix}?`}
      description={consequence}
      confirmLabel={`Revoke ${what}`}
      step={revoke}
      act={() => revoke.mutateAsync(prefix)}
    >
      Revoke
    </ConfirmButton>
  );
}
