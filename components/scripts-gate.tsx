"use client";

import { useSyncExternalStore, type ReactNode } from "react";

// A form that carries a password must never put it in a URL. One whose scripts did not load (blocked, or still
// loading) falls back to the browser's own submit, which for a GET form puts every named field in the address
// bar, the history and the server's log. So such a form posts, its fields have no `name` (a native submit
// sends nothing), its button waits for useHydrated(), and <ScriptsMissing> says what to do when the scripts
// never come: the sign-in form, the password change and the reset link's form all do this.

const noChanges = () => () => {};

/** false in the server's HTML and while hydrating, true once React runs the component. */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noChanges,
    () => true,
    () => false,
  );
}

/** Shown a few seconds after the page's HTML when its scripts have not taken over (a page whose scripts load never shows it). */
export function ScriptsMissing({ hydrated, children }: { hydrated: boolean; children: ReactNode }) {
  if (hydrated) return null;
  return (
    <p
      data-testid="scripts-missing"
      style={{ animation: "appear 0s 4s forwards" }}
      className="text-sm text-amber-900 opacity-0"
    >
      {children}
    </p>
  );
}
