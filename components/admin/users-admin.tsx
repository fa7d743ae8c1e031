"use client";

import { useState } from "react";
import { roles, type Role } from "@/lib/identity/roles";
import type { NewUser, UserInfo } from "@/lib/identity/users";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCurrentUser } from "../current-user";
import { Button } from "../ui/button";
import { ConfirmButton } from "../ui/confirm";
import { actionsColumn, DataTable, type Column, type RowSpec } from "../ui/data-table";
import { fieldText, FormDialog, type DialogProps } from "../ui/dialog";
import { ErrorAlert } from "../ui/error-alert";
import { SelectField, TextField } from "../ui/field";
import { PageSection, StateLabel } from "../ui/page";
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

function CreateUserDialog({ onClose, onDone }: DialogProps<{ user: UserInfo; password: string | null }>) {
  const create = useCollectionMutation(queryKeys.admin.users, {
    mutationFn: (body: NewUser) => api.post("/api/v1/admin/users", { body }),
    onSuccess: onDone,
  });
  const submit = (form: FormData) => {
    const body: Record<string, string> = {};
    for (const field of ["email", "name", "role", "password"]) {
      const value = fieldText(form, field);
      if (value) body[field] = value;
    }
    // The form's own checks stand in for the schema's; the server parses the body again and says what is wrong.
    create.mutate(body as NewUser);
  };
  return (
    <FormDialog
      title="Add a person"
      description="They sign in with this email and a password. There is no sign-up: only admins add people."
      submitLabel="Add person"
      pendingLabel="Adding…"
      step={create}
      onSubmit={submit}
      onClose={onClose}
    >
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
    </FormDialog>
  );
}

function usePatchUser(onDone: (user: UserInfo) => void) {
  return useCollectionMutation(queryKeys.admin.users, {
    mutationFn: ({ id, patch }: { id: string; patch: { role?: Role; active?: boolean } }) =>
      api.patch("/api/v1/admin/users/{user_id}", { params: { user_id: id }, body: patch }),
    onSuccess: onDone,
  });
}

function RoleDialog({ user, onClose, onDone }: { user: UserInfo } & DialogProps<UserInfo>) {
  const patch = usePatchUser(onDone);
  return (
    <FormDialog
      title={`Change role: ${user.email}`}
      description="It takes effect on their next click or request; they stay signed in."
      submitLabel="Save role"
      pendingLabel="Saving…"
      step={patch}
      onSubmit={(form) => patch.mutate({ id: user.id, patch: { role: fieldText(form, "role") as Role } })}
      onClose={onClose}
    >
      <SelectField label="Role" name="role" defaultValue={user.role ?? "viewer"} options={roleOptions} />
    </FormDialog>
  );
}

const userRow: RowSpec<UserInfo> = { key: (u) => u.id, testId: "user-row", dimmed: (u) => !u.active };

type Open =
  | { kind: "create" }
  | { kind: "role"; user: UserInfo }
  | { kind: "password"; user: UserInfo; password: string }
  | { kind: "reset"; user: UserInfo }
  | null;

/** Why a row offers no actions: one's own, or the last admin standing. */
function lockedBecause(u: UserInfo, me: string, activeAdmins: number): string | null {
  if (u.id === me) return "You cannot change your own role or deactivate yourself.";
  if (u.role === "admin" && u.active && activeAdmins <= 1)
    return "The last active admin stays: make someone else an admin first.";
  return null;
}

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
  const deactivate = usePatchUser((u) => setNotice(`${u.email} is deactivated: signed out, tokens revoked.`));
  const reactivate = usePatchUser((u) =>
    done(`${u.email} can sign in again. Tokens revoked at deactivation stay revoked.`),
  );
  const users = data.items;
  const activeAdmins = users.filter((u) => u.role === "admin" && u.active).length;
  const actions = (u: UserInfo) => {
    const locked = lockedBecause(u, me.id, activeAdmins);
    if (locked) return <span className="text-xs text-slate-500">{locked}</span>;
    return (
      <>
        <Button size="sm" onClick={() => setOpen({ kind: "role", user: u })} aria-label={`Change role of ${u.email}`}>
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
          <ConfirmButton
            size="sm"
            aria-label={`Deactivate ${u.email}`}
            title={`Deactivate ${u.email}?`}
            description="They are signed out at once and their personal access tokens are revoked. They cannot sign in until an admin reactivates them. Everything they did stays in the audit trail."
            confirmLabel="Deactivate"
            step={deactivate}
            act={() => deactivate.mutateAsync({ id: u.id, patch: { active: false } })}
          >
            Deactivate
          </ConfirmButton>
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
      </>
    );
  };
  const columns: Array<Column<UserInfo>> = [
    {
      header: "Email",
      className: "font-medium",
      cell: (u) => (
        <>
          {u.email}{" "}
          {u.id === me.id ? (
            <span className="ml-1 rounded bg-slate-100 px-1.5 py-0.5 text-xs font-normal text-slate-700">you</span>
          ) : null}
        </>
      ),
    },
    { header: "Name", cell: (u) => u.name },
    { header: "Role", cell: (u) => u.role ?? "no role" },
    {
      header: "Status",
      cell: (u) => (u.active ? <StateLabel state="active" /> : <StateLabel state="deactivated" />),
    },
    { header: "Created", className: "nowrap text-slate-600", cell: (u) => formatUtc(u.created_at, { seconds: false }) },
    actionsColumn(actions),
  ];

  return (
    <PageSection
      id="users-heading"
      title="Users"
      description="People who sign in to Settle. Viewers read; operators act on invocations; managers also see metrics and escalations; admins also manage users and runtime keys. Deactivate rather than delete: their actions stay in the audit trail under their email."
      action={
        <Button variant="primary" onClick={() => setOpen({ kind: "create" })}>
          Add person
        </Button>
      }
      notice={notice}
    >
      <DataTable caption="Users" columns={columns} rows={users} row={userRow} error={error} />
      <ErrorAlert error={reactivate.error} />

      {open?.kind === "create" ? (
        <CreateUserDialog
          onClose={() => setOpen(null)}
          onDone={({ user, password }) => {
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
    </PageSection>
  );
}
