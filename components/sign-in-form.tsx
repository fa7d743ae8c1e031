"use client";

import { useRouter } from "next/navigation";
import { useRef, useState, type FormEvent, type InputHTMLAttributes, type Ref } from "react";
import { authClient } from "@/lib/identity/auth-client";
import { ScriptsMissing, useHydrated } from "./scripts-gate";

// The credentials must never reach a URL: the form posts, its fields have no
// `name`, and its button waits for React (scripts-gate.tsx says why).

/** A field with its label above it; no `name`, read through its ref. */
function Credential({
  label,
  id,
  ...input
}: InputHTMLAttributes<HTMLInputElement> & { label: string; id: string; ref: Ref<HTMLInputElement> }) {
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium">
        {label}
      </label>
      <input id={id} {...input} className="w-full rounded-md border border-slate-300 px-3 py-2 text-sm shadow-sm" />
    </div>
  );
}

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
      <Credential ref={email} id="email" label="Email" type="email" autoComplete="username" required autoFocus />
      <Credential
        ref={password}
        id="password"
        label="Password"
        type="password"
        autoComplete="current-password"
        required
      />
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
