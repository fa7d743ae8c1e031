"use client";

import { useRouter } from "next/navigation";
import { useRef, useState, type FormEvent } from "react";
import { authClient } from "@/lib/identity/auth-client";
import { ScriptsMissing, useHydrated } from "./scripts-gate";

// The credentials must never reach a URL: the form posts, its fields have no
// `name`, and its button waits for React (scripts-gate.tsx says why).

export function SignInForm({ next, expectedUrl }: { next: string; expectedUrl: string }) {
  const router = useRouter();
  const email = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);
  const hydrated = useHydrated();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError(null);
    const { error: failure } = await authClient.signIn.email({
      email: email.current?.value ?? "",
      password: password.current?.value ?? "",
    });
    setPending(false);
    if (failure) {
      // Settle's own refusals (account locked, wrong address) carry their explanation in agent_message.
      const explained = (failure as { agent_message?: unknown }).agent_message;
      if (typeof explained === "string") setError(explained);
      else
        setError(
          failure.status === 429
            ? "Too many attempts. Wait a minute, then try again."
            : (failure.message ?? "Sign-in failed."),
        );
      return;
    }
    router.replace(next);
    router.refresh();
  }

  return (
    <form method="post" action="/sign-in" onSubmit={submit} className="space-y-4" noValidate>
      <div className="space-y-1">
        <label htmlFor="email" className="block text-sm font-medium">
          Email
        </label>
        <input
          ref={email}
          id="email"
          type="email"
          autoComplete="username"
          required
          autoFocus
          className="w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm"
        />
      </div>
      <div className="space-y-1">
        <label htmlFor="password" className="block text-sm font-medium">
          Password
        </label>
        <input
          ref={password}
          id="password"
          type="password"
          autoComplete="current-password"
          required
          className="w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm"
        />
      </div>
      {error ? (
        <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-800">
          {error}
        </p>
      ) : null}
      <button
        type="submit"
        disabled={!hydrated || pending}
        className="w-full rounded-md bg-slate-900 px-3 py-2 text-sm font-medium text-white hover:bg-slate-800 disabled:opacity-60"
      >
        {pending ? "Signing in…" : "Sign in"}
      </button>
      <ScriptsMissing hydrated={hydrated}>
        This page&apos;s scripts have not loaded, so it cannot sign you in here. Open{" "}
        <a className="font-medium underline" href={`${expectedUrl}/sign-in`}>
          {expectedUrl}/sign-in
        </a>{" "}
        instead.
      </ScriptsMissing>
    </form>
  );
}
