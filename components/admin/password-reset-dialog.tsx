"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import type { UserInfo } from "@/lib/identity/users";
import type { PasswordResetAnswer } from "@/lib/identity/passwords";
import { api } from "../api";
import { FormDialog } from "../ui/dialog";
import { ShownOnceDialog } from "./shown-once";

// An admin resets someone's password: a one-time link they open to choose one, or a temporary password they
// must change when they sign in. Nothing is chosen for the admin; what Settle answers is shown once.

export function PasswordResetDialog({ user, onClose }: { user: UserInfo; onClose: (notice: string | null) => void }) {
  const [mode, setMode] = useState<"link" | "temporary" | null>(null);
  const reset = useMutation({
    mutationFn: (body: { mode: "link" | "temporary" }) =>
      api.post("/api/v1/admin/users/{user_id}/password-reset", { params: { user_id: user.id }, body }),
  });
  const answer: PasswordResetAnswer | undefined = reset.data;
  if (answer) {
    const link = answer.mode === "link";
    return (
      <ShownOnceDialog
        title={`Password reset for ${user.email}`}
        label={link ? "One-time reset link" : "Temporary password"}
        secret={(link ? answer.link : answer.temporary_password) ?? ""}
        note="Copy it now. It is shown only this once: Settle keeps only a hash of it."
        onClose={() =>
          onClose(
            link
              ? `${user.email} was signed out; their reset link works once, until ${answer.expires_at?.slice(0, 16).replace("T", " ")} UTC.`
              : `${user.email} was signed out; they must choose a new password when they sign in with the temporary one.`,
          )
        }
      >
        <p className="text-sm text-slate-700">
          {link
            ? `Pass it to ${user.email} over a channel you trust. Opening it lets them choose a new password, once, within a day.`
            : `Pass it to ${user.email} over a channel you trust. When they sign in with it, they must choose their own before anything else.`}
        </p>
      </ShownOnceDialog>
    );
  }
  const choice = (value: "link" | "temporary", title: string, detail: string) => (
    <label className="flex items-start gap-2 text-sm">
      <input type="radio" name="mode" className="mt-1" checked={mode === value} onChange={() => setMode(value)} />
      <span>
        <span className="font-medium">{title}</span>
        <span className="block text-slate-600">{detail}</span>
      </span>
    </label>
  );
  return (
    <FormDialog
      title={`Reset the password of ${user.email}?`}
      description="They are signed out everywhere at once. Their personal access tokens keep working; revoke those by deactivating them."
      submitLabel={
        mode === "link" ? "Make a reset link" : mode === "temporary" ? "Set a temporary password" : "Choose one"
      }
      pendingLabel="Resetting…"
      step={reset}
      submitDisabled={mode === null}
      onSubmit={() => (mode ? reset.mutate({ mode }) : undefined)}
      onClose={() => onClose(null)}
    >
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium text-slate-800">How they get a new one</legend>
        {choice("link", "A one-time link", "They open it and choose a password themselves; it expires in a day.")}
        {choice("temporary", "A temporary password", "They sign in with it and must change it before anything else.")}
      </fieldset>
    </FormDialog>
  );
}
