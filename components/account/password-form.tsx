"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { api } from "../api";
import { ScriptsMissing, useHydrated } from "../scripts-gate";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/error-alert";
import { TextField } from "../ui/field";

// Changing one's own password (Account → Password), and choosing one with an admin's one-time reset link.
// Both ask for the new password twice and say so before sending when the two differ. Like the sign-in form,
// neither can put a password in a URL: they post, their fields have ids but no names (a native submit before
// the scripts load sends nothing), and their button waits for React (../scripts-gate.tsx).

/** A field's value, read by its id: the fields have no name, so FormData would see none of them. */
const valueOf = (form: HTMLFormElement, id: string): string =>
  (form.elements.namedItem(id) as HTMLInputElement | null)?.value ?? "";

function useTwice() {
  const [mismatch, setMismatch] = useState(false);
  const read = (form: HTMLFormElement): string | null => {
    const next = valueOf(form, "new-password");
    const again = valueOf(form, "new-password-again");
    setMismatch(next !== again);
    return next === again ? next : null;
  };
  return { mismatch, read };
}

function NoScripts({ hydrated, page }: { hydrated: boolean; page: string }) {
  return (
    <ScriptsMissing hydrated={hydrated}>
      This page&apos;s scripts have not loaded, so it cannot change a password, and nothing was sent. Reload{" "}
      <a className="font-medium underline" href={page}>
        the page
      </a>
      ; if it stays like this, open Settle at the address your admin gave you.
    </ScriptsMissing>
  );
}

function NewPasswordFields({ mismatch }: { mismatch: boolean }) {
  return (
    <>
      <TextField
        label="New password"
        id="new-password"
        type="password"
        autoComplete="new-password"
        required
        minLength={10}
        maxLength={128}
        hint="At least 10 characters."
      />
      <TextField
        label="New password again"
        id="new-password-again"
        type="password"
        autoComplete="new-password"
        required
      />
      {mismatch ? (
        <p role="alert" className="text-sm text-rose-700">
          The two new passwords differ.
        </p>
      ) : null}
    </>
  );
}

export function ChangePasswordForm({ required }: { required: boolean }) {
  const router = useRouter();
  const hydrated = useHydrated();
  const twice = useTwice();
  const change = useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) => api.post("/api/v1/me/password", { body }),
    onSuccess: () => {
      if (required) router.push("/");
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const next = twice.read(form);
    if (next !== null) change.mutate({ current_password: valueOf(form, "current-password"), new_password: next });
  };
  return (
    <form method="post" action="/account/password" onSubmit={submit} className="max-w-md space-y-4">
      {required ? (
        <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
          An admin reset your password to a temporary one. Choose your own to go on.
        </p>
      ) : null}
      <TextField
        label={required ? "Temporary password" : "Current password"}
        id="current-password"
        type="password"
        autoComplete="current-password"
        required
      />
      <NewPasswordFields mismatch={twice.mismatch} />
      <ErrorAlert error={change.error} look="box" />
      {change.isSuccess && !required ? (
        <p role="status" className="text-sm text-emerald-800">
          Your password is changed.
        </p>
      ) : null}
      <Button type="submit" variant="primary" disabled={!hydrated || change.isPending}>
        {change.isPending ? "Changing…" : "Change password"}
      </Button>
      <NoScripts hydrated={hydrated} page="/account/password" />
    </form>
  );
}

export function ResetPasswordForm({ token }: { token: string }) {
  const hydrated = useHydrated();
  const twice = useTwice();
  const redeem = useMutation({
    mutationFn: (body: { token: string; new_password: string }) => api.post("/api/v1/password-resets", { body }),
  });
  if (redeem.data)
    return (
      <p role="status" className="text-sm text-emerald-800">
        Your new password is set for {redeem.data.email}.{" "}
        <a href="/sign-in" className="font-medium underline">
          Sign in
        </a>
        .
      </p>
    );
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const next = twice.read(event.currentTarget);
    if (next !== null) redeem.mutate({ token, new_password: next });
  };
  return (
    // Posts to the page itself, whose address carries the token already; no field of the form goes anywhere.
    <form
      method="post"
      action={`/reset-password?token=${encodeURIComponent(token)}`}
      onSubmit={submit}
      className="space-y-4"
    >
      <NewPasswordFields mismatch={twice.mismatch} />
      <ErrorAlert error={redeem.error} look="box" />
      <Button type="submit" variant="primary" disabled={!hydrated || redeem.isPending}>
        {redeem.isPending ? "Saving…" : "Set my password"}
      </Button>
      <NoScripts hydrated={hydrated} page={`/reset-password?token=${encodeURIComponent(token)}`} />
    </form>
  );
}
