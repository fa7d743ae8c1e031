"use client";

import { useState, type FormEvent } from "react";
import { roles, type Role } from "@/lib/identity/roles";
import type { NewUser, UserInfo } from "@/lib/identity/users";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCurrentUser } from "../current-user";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { SelectField, TextField } from "../ui/field";
import { ConfirmDialog } from "../ui/confirm";
import { ShownOnceDialog } from "./shown-once";
import { PasswordResetDialog } from "./password-reset-dialog";
import { useCollection, useCollectionMutation } from "./use-collection";

export const roleHelp: Record<Role, string> = {
  viewer: "reads the queue, timelines and audit",
  operator: "also acts: verifies, reconciles, escalates, assigns",
  manager: "also sees metrics and escalations",
  admin: "also manages users and runtime keys",
};
const roleOptions = roles.map((r) => ({ value: r, label: `${r} — ${roleHelp[r]}` }));

function CreateUserDialog({
  onClose,
  onCreated,
}: {
  onClose: () => void;
  onCreated: (user: UserInfo, password: string | null) => void;
}) {
  const create = useCollectionMutation(queryKeys.admin.users, {
    mutationFn: (body: NewUser) => api.post("/api/v1/admin/users", { body }),
    onSuccess: ({ user, password }) => onCreated(user, password),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body: Record<string, string> = {};
    for (const field of ["email", "name", "role", "password"]) {
      const value = String(form.get(field) ?? "").trim();
      if (value) body[field] = value;
    }
    // The form's own checks stand in for the schema's; the server parses the body again and says what is wrong.
    create.mutate(body as NewUser);
  };
  return (
    <Dialog
      open
      onOpenChange={(open) => (open ? null : onClose())}
      title="Add a person"
      description="They sign in with this email and a password. There is no sign-up: only admins add people."
    >
      <form onSubmit={submit} className="space-y-4">
        <TextField label="Email" name="email" type="email" required autoComplete="off" />
        <TextField label="Name (optional)" name="name" autoComplete="off" />
        <SelectField label="Role" name="role" defaultValue="operator" options={roleOptions} />
        <TextField
          label="Password (optional)"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={10}
          hint="Leave it empty and Settle generates one, shown to you once, to pass on."
        />
        <ErrorAlert error={create.error} look="box" />
        <DialogActions label="Add person" pendingLabel="Adding…" pending={create.isPending} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

function usePatchUser(onDone: (user: UserInfo) => void) {
  return useCollectionMutation(queryKeys.admin.users, {
    mutationFn: ({ id, patch }: { id: string; patch: { role?: Role; active?: boolean } }) =>
      api.patch("/api/v1/admin/users/{user_id}", { params: { user_id: id }, body: patch }),
    onSuccess: onDone,
  });
}

function RoleDialog({
  user,
  onClose,
  onDone,
}: {
  user: UserInfo;
  onClose: () => void;
  onDone: (user: UserInfo) => void;
}) {
  const patch = usePatchUser(onDone);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    patch.mutate({ id: user.id, patch: { role: String(new FormData(event.currentTarget).get("role")) as Role } });
  };
  return (
    <Dialog
      open
      onOpenChange={(open) => (open ? null : onClose())}
      title={`Change role: ${user.email}`}
      description="It takes effect on their next click or request; they stay signed in."
    >
      <form onSubmit={submit} className="space-y-4">
        <SelectField label="Role" name="role" defaultValue={user.role ?? "viewer"} options={roleOptions} />
        <ErrorAlert error={patch.error} look="box" />
        <DialogActions label="Save role" pendingLabel="Saving…" pending={patch.isPending} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

type Open =
  | { kind: "create" }
  | { kind: "role"; user: UserInfo }
  | { kind: "deactivate"; user: UserInfo }
  | { kind: "password"; user: UserInfo; password: string }
  | { kind: "reset"; user: UserInfo }
  | null;

export function UsersAdmin({ initial }: { initial: UserInfo[] }) {
  const me = useCurrentUser();
  const [open, setOpen] = useState<Open>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const { data, error } = useCollection({
    queryKey: queryKeys.admin.users,
    queryFn: () => api.get("/api/v1/admin/users"),
    initialData: { items: initial },
  });
  const done = (message: string) => {
    setOpen(null);
    setNotice(message);
  };
  const deactivate = usePatchUser((u) => done(`${u.email} is deactivated: signed out, tokens revoked.`));
  const reactivate = usePatchUser((u) =>
    done(`${u.email} can sign in again. Tokens revoked at deactivation stay revoked.`),
  );
  const users = data.items;
  const activeAdmins = users.filter((u) => u.role === "admin" && u.active).length;

  return (
    <section aria-labelledby="users-heading" className="space-y-4">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h1 id="users-heading" className="text-xl font-semibold">
            Users
          </h1>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            People who sign in to Settle. Viewers read; operators act on invocations; managers also see metrics and
            escalations; admins also manage users and runtime keys. Deactivate rather than delete: their actions stay in
            the audit trail under their email.
          </p>
        </div>
        <Button variant="primary" onClick={() => setOpen({ kind: "create" })}>
          Add person
        </Button>
      </div>
      <p role="status" aria-live="polite" className="text-sm text-emerald-800">
        {notice}
      </p>
      <ErrorAlert error={error} prefix="Could not refresh the list:" />

      <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white shadow-sm">
        <table className="w-full text-left text-sm">
          <caption className="sr-only">Users</caption>
          <thead className="whitespace-nowrap bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
            <tr>
              <th scope="col" className="px-4 py-2 font-medium">
                Email
              </th>
              <th scope="col" className="px-4 py-2 font-medium">
                Name
              </th>
              <th scope="col" className="px-4 py-2 font-medium">
                Role
              </th>
              <th scope="col" className="px-4 py-2 font-medium">
                Status
              </th>
              <th scope="col" className="px-4 py-2 font-medium">
                Created
              </th>
              <th scope="col" className="px-4 py-2 font-medium">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {users.map((u) => {
              const self = u.id === me.id;
              const lastAdmin = u.role === "admin" && u.active && activeAdmins <= 1;
              const locked = self
                ? "You cannot change your own role or deactivate yourself."
                : lastAdmin
                  ? "The last active admin stays: make someone else an admin first."
                  : null;
              return (
                <tr key={u.id} data-testid="user-row" className={u.active ? "" : "bg-slate-50 text-slate-500"}>
                  <td className="px-4 py-2 font-medium">
                    {u.email}{" "}
                    {self ? (
                      <span className="ml-1 rounded bg-slate-100 px-1.5 py-0.5 text-xs font-normal text-slate-700">
                        you
                      </span>
                    ) : null}
                  </td>
                  <td className="px-4 py-2">{u.name}</td>
                  <td className="px-4 py-2">{u.role ?? "no role"}</td>
                  <td className="px-4 py-2">
                    {u.active ? (
                      <span className="inline-flex items-center gap-1 text-emerald-800">
                        <span aria-hidden="true">●</span>Active
                      </span>
                    ) : (
                      <span className="inline-flex items-center gap-1 text-slate-600">
                        <span aria-hidden="true">○</span>Deactivated
                      </span>
                    )}
                  </td>
                  <td className="whitespace-nowrap px-4 py-2 text-slate-600">
                    {formatUtc(u.created_at, { seconds: false })}
                  </td>
                  <td className="whitespace-nowrap px-4 py-2 text-right">
                    {locked ? (
                      <span className="text-xs text-slate-500">{locked}</span>
                    ) : (
                      <span className="inline-flex gap-2">
                        <Button
                          size="sm"
                          onClick={() => setOpen({ kind: "role", user: u })}
                          aria-label={`Change role of ${u.email}`}
                        >
                          Change role
                        </Button>
                        {u.active ? (
                          <Button
                            size="sm"
                            onClick={() => setOpen({ kind: "reset", user: u })}
                            aria-label={`Reset the password of ${u.email}`}
                          >
                            Reset password
                          </Button>
                        ) : null}
                        {u.active ? (
                          <Button
                            size="sm"
                            variant="dangerGhost"
                            onClick={() => {
                              deactivate.reset();
                              setOpen({ kind: "deactivate", user: u });
                            }}
                            aria-label={`Deactivate ${u.email}`}
                          >
                            Deactivate
                          </Button>
                        ) : (
                          <Button
                            size="sm"
                            onClick={() => reactivate.mutate({ id: u.id, patch: { active: true } })}
                            disabled={reactivate.isPending}
                            aria-label={`Reactivate ${u.email}`}
                          >
                            Reactivate
                          </Button>
                        )}
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ErrorAlert error={reactivate.error} />

      {open?.kind === "create" ? (
        <CreateUserDialog
          onClose={() => setOpen(null)}
          onCreated={(user, password) => {
            setNotice(`Added ${user.email} as ${user.role}.`);
            setOpen(password ? { kind: "password", user, password } : null);
          }}
        />
      ) : null}
      {open?.kind === "password" ? (
        <ShownOnceDialog
          title={`Password for ${open.user.email}`}
          label="Generated password"
          secret={open.password}
          onClose={() => setOpen(null)}
        >
          <p className="text-sm text-slate-700">
            Pass it to {open.user.email} over a channel you trust. They sign in at{" "}
            <span className="font-mono">{window.location.origin}/sign-in</span>.
          </p>
        </ShownOnceDialog>
      ) : null}
      {open?.kind === "reset" ? (
        <PasswordResetDialog
          user={open.user}
          onClose={(message) => {
            setOpen(null);
            if (message) setNotice(message);
          }}
        />
      ) : null}
      {open?.kind === "role" ? (
        <RoleDialog
          user={open.user}
          onClose={() => setOpen(null)}
          onDone={(u) => done(`${u.email} is now ${u.role}.`)}
        />
      ) : null}
      {open?.kind === "deactivate" ? (
        <ConfirmDialog
          title={`Deactivate ${open.user.email}?`}
          description="They are signed out at once and their personal access tokens are revoked. They cannot sign in until an admin reactivates them. Everything they did stays in the audit trail."
          confirmLabel="Deactivate"
          pending={deactivate.isPending}
          error={deactivate.error}
          onConfirm={() => deactivate.mutate({ id: open.user.id, patch: { active: false } })}
          onCancel={() => setOpen(null)}
        />
      ) : null}
    </section>
  );
}
