"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { api } from "../api";
import { Button } from "../ui/button";
import { ErrorAlert } from "../ui/error-alert";
import { TextField } from "../ui/field";

// Changing one's own password (Account → Password), and choosing one with an admin's one-time reset link.
// Both ask for the new password twice and say so before sending when the two differ.

function useTwice() {
  const [mismatch, setMismatch] = useState(false);
  const read = (form: FormData): string | null => {
    const next = String(form.get("new_password") ?? "");
    const again = String(form.get("again") ?? "");
    setMismatch(next !== again);
    return next === again ? next : null;
  };
  return { mismatch, read };
}

function NewPasswordFields({ mismatch }: { mismatch: boolean }) {
  return (
    <>
      <TextField
        label="New password"
        name="new_password"
        type="password"
        autoComplete="new-password"
        required
        minLength={10}
        maxLength={128}
        hint="At least 10 characters."
      />
      <TextField label="New password again" name="again" type="password" autoComplete="new-password" required />
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
  const twice = useTwice();
  const change = useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) => api.post("/api/v1/me/password", { body }),
    onSuccess: () => {
      if (required) router.push("/");
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = twice.read(form);
    if (next !== null)
      change.mutate({ current_password: String(form.get("current_password") ?? ""), new_password: next });
  };
  return (
    <form onSubmit={submit} className="max-w-md space-y-4">
      {required ? (
        <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
          An admin reset your password to a temporary one. Choose your own to go on.
        </p>
      ) : null}
      <TextField
        label={required ? "Temporary password" : "Current password"}
        name="current_password"
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
      <Button type="submit" variant="primary" disabled={change.isPending}>
        {change.isPending ? "Changing…" : "Change password"}
      </Button>
    </form>
  );
}

export function ResetPasswordForm({ token }: { token: string }) {
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
    const next = twice.read(new FormData(event.currentTarget));
    if (next !== null) redeem.mutate({ token, new_password: next });
  };
  return (
    <form onSubmit={submit} className="space-y-4">
      <NewPasswordFields mismatch={twice.mismatch} />
      <ErrorAlert error={redeem.error} look="box" />
      <Button type="submit" variant="primary" disabled={redeem.isPending}>
        {redeem.isPending ? "Saving…" : "Set my password"}
      </Button>
    </form>
  );
}
