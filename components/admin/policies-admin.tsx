"use client";

import { useId, useState, type FormEvent } from "react";
import { formatDuration, formatDurationExact, parseDuration } from "@/lib/outcome/durations";
import type { Policy, PolicyChange, PolicyKey, PolicyList, PolicyValues } from "@/lib/policies/policies";
import { ApiClientError } from "@/lib/query/fetch";
import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";
import { formatUtc } from "../audit/time";
import { useCan } from "../current-user";
import { Cell, DataTable, rowLook, type Column } from "../ui/data-table";
import { errorText } from "../ui/error-alert";
import { PageSection, Subsection } from "../ui/page";
import { RowEditActions, useRowEdit } from "../ui/row-edit";
import { useCollection, useCollectionMutation } from "./use-collection";

// Policies per effect class, edited inline by admins (everyone else reads
// them). A row states the whole policy of its class; an empty duration is
// "off". The server validates again and its messages land next to the field.

type Field =
  "overdue_after_s" | "escalate_after_s" | "approval_expires_after_s" | "duplicate_window_s" | "approval_quorum";
type Draft = Record<Field, string>;
type Errors = Partial<Record<Field | "form", string>>;

const durationFields: Array<{ field: Exclude<Field, "approval_quorum">; label: string }> = [
  { field: "overdue_after_s", label: "Overdue after" },
  { field: "escalate_after_s", label: "Escalates after" },
  { field: "approval_expires_after_s", label: "Approval expires after" },
  { field: "duplicate_window_s", label: "Duplicate window" },
];

const classHelp: Record<PolicyKey, string> = {
  "*": "every class without its own policy, and unclassified invocations",
  money: "payments, refunds, transfers",
  destructive: "deletes and overwrites",
  send: "emails, messages, notifications",
  create: "new records",
  read: "lookups without side effects",
};

const show = (s: number | null) => (s === null ? "off" : formatDuration(s));
const className = (key: PolicyKey) => (key === "*" ? "Default (*)" : key);

function toDraft(p: Policy): Draft {
  const d = (s: number | null) => (s === null ? "" : formatDurationExact(s));
  return {
    overdue_after_s: d(p.overdue_after_s),
    escalate_after_s: d(p.escalate_after_s),
    approval_expires_after_s: d(p.approval_expires_after_s),
    duplicate_window_s: d(p.duplicate_window_s),
    approval_quorum: String(p.approval_quorum),
  };
}

/** Reads the form; what it cannot read is an error here, everything else the server judges. */
function fromDraft(d: Draft): { body: PolicyValues | null; errors: Errors } {
  const errors: Errors = {};
  const body = { approval_quorum: 0 } as PolicyValues;
  for (const { field } of durationFields) {
    const s = parseDuration(d[field]);
    if (s === undefined) errors[field] = "Write a duration such as 30m, 2h or 1d 4h, or leave it empty for off.";
    else body[field] = s;
  }
  if (/^\s*\d{1,3}\s*$/.test(d.approval_quorum)) body.approval_quorum = Number(d.approval_quorum);
  else errors.approval_quorum = "A whole number of people, from 1.";
  return Object.keys(errors).length > 0 ? { body: null, errors } : { body, errors };
}

/** The server's validation issues, next to the fields they are about. */
function serverErrors(error: unknown): Errors {
  if (!(error instanceof ApiClientError)) return { form: errorText(error) ?? "Saving failed." };
  const issues =
    (error.envelope?.safe_details as { issues?: Array<{ path: string; message: string }> } | undefined)?.issues ?? [];
  const out: Errors = {};
  for (const issue of issues) {
    const field = issue.path as Field;
    if (
      [
        "overdue_after_s",
        "escalate_after_s",
        "approval_expires_after_s",
        "duplicate_window_s",
        "approval_quorum",
      ].includes(field)
    )
      out[field] ??= issue.message;
  }
  return Object.keys(out).length > 0 ? out : { form: error.message };
}

function Source({ p }: { p: Policy }) {
  const who =
    p.updated_by && p.updated_at ? (
      <span className="block text-xs text-slate-500">
        changed by {p.updated_by},{" "}
        <time dateTime={p.updated_at} className="whitespace-nowrap">
          {formatUtc(p.updated_at, { seconds: false })}
        </time>
      </span>
    ) : null;
  if (p.source === "own")
    return (
      <span>
        {p.effect_class === "*" ? "set" : "own policy"}
        {who}
      </span>
    );
  if (p.effect_class !== "*")
    return <span className="text-slate-600">uses the default{p.source === "built_in" ? " (built-in)" : ""}</span>;
  return <span className="text-slate-600">built-in (nothing set)</span>;
}

function EditRow({ policy, onDone }: { policy: Policy; onDone: (message: string) => void }) {
  const formId = useId();
  const [draft, setDraft] = useState<Draft>(() => toDraft(policy));
  const [errors, setErrors] = useState<Errors>({});
  const params = { effect_class: policy.effect_class };
  const save = useCollectionMutation(queryKeys.policies, {
    mutationFn: (body: PolicyValues) => api.put("/api/v1/policies/{effect_class}", { params, body }),
    onSuccess: () => onDone(`Saved the ${className(policy.effect_class)} policy.`),
    onError: (error) => setErrors(serverErrors(error)),
  });
  const reset = useCollectionMutation(queryKeys.policies, {
    mutationFn: () => api.delete("/api/v1/policies/{effect_class}", { params }),
    onSuccess: () =>
      onDone(
        policy.effect_class === "*"
          ? "The default is Settle's built-in policy again."
          : `${policy.effect_class} uses the default policy again.`,
      ),
    onError: (error) => setErrors({ form: errorText(error) ?? "Failed." }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { body, errors } = fromDraft(draft);
    setErrors(errors);
    if (body) save.mutate(body);
  };
  const input = (field: Field, label: string, hint: string) => {
    const id = `${formId}-${field}`;
    const error = errors[field];
    return (
      <Cell key={field}>
        <label htmlFor={id} className="sr-only">{`${label} (${className(policy.effect_class)})`}</label>
        <input
          id={id}
          form={formId}
          value={draft[field]}
          onChange={(e) => setDraft({ ...draft, [field]: e.target.value })}
          inputMode={field === "approval_quorum" ? "numeric" : "text"}
          placeholder={field === "approval_quorum" ? "1" : "off"}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : `${id}-hint`}
          className={`w-28 rounded-md border px-2 py-1 text-sm shadow-sm ${error ? "border-rose-600" : "border-slate-300"}`}
        />
        {error ? (
          <p id={`${id}-error`} className="mt-1 max-w-[14rem] text-xs text-rose-800">
            <span aria-hidden="true">✕ </span>
            {error}
          </p>
        ) : (
          <p id={`${id}-hint`} className="mt-1 text-xs text-slate-500">
            {hint}
          </p>
        )}
      </Cell>
    );
  };
  return (
    <tr data-testid="policy-row" data-class={policy.effect_class} className={`align-top ${rowLook.editing}`}>
      <Cell rowHeader>{className(policy.effect_class)}</Cell>
      {durationFields.map(({ field, label }) => input(field, label, "e.g. 30m, 2h; empty: off"))}
      {input("approval_quorum", "Approvals needed", "different people")}
      <RowEditActions
        formId={formId}
        onSubmit={submit}
        saving={save}
        onCancel={() => onDone("")}
        what={policy.source === "own" ? "editing its own policy" : "saving gives it its own policy"}
        reset={
          policy.source === "own"
            ? { label: policy.effect_class === "*" ? "Reset to built-in" : "Use the default", step: reset }
            : null
        }
        error={errors.form}
      >
        {Object.keys(errors).some((k) => k !== "form") ? (
          <p role="alert" className="sr-only">
            Not saved: check the fields marked invalid.
          </p>
        ) : null}
      </RowEditActions>
    </tr>
  );
}

function ChangeLine({ c }: { c: PolicyChange }) {
  const fields: Array<[keyof PolicyValues, string]> = [
    ["overdue_after_s", "overdue after"],
    ["escalate_after_s", "escalates after"],
    ["approval_expires_after_s", "approval expires after"],
    ["duplicate_window_s", "duplicate window"],
    ["approval_quorum", "approvals needed"],
  ];
  const fmt = (k: keyof PolicyValues, v: number | null | undefined) =>
    k === "approval_quorum" ? String(v ?? 1) : show(v ?? null);
  const what = !c.after
    ? "removed its own policy (it uses the default again)"
    : fields
        .filter(([k]) => !c.before || (c.before[k] ?? null) !== (c.after![k] ?? null))
        .map(([k, label]) =>
          c.before ? `${label} ${fmt(k, c.before[k])} → ${fmt(k, c.after![k])}` : `${label} ${fmt(k, c.after![k])}`,
        )
        .join(", ") || "saved without changes";
  return (
    <li className="text-sm text-slate-700">
      <time dateTime={c.at} className="tabular-nums text-slate-500">
        {formatUtc(c.at, { seconds: false })}
      </time>{" "}
      · {c.actor} · <strong>{className(c.effect_class)}</strong>: {what}
    </li>
  );
}

export function PoliciesAdmin({ initial }: { initial: PolicyList }) {
  const canEdit = useCan("administer");
  const edit = useRowEdit<Policy>((p) => p.effect_class, canEdit);
  const { data, error } = useCollection({
    queryKey: queryKeys.policies,
    queryFn: () => api.get("/api/v1/policies"),
    initialData: initial,
  });
  const columns: Array<Column<Policy>> = [
    {
      header: "Effect class",
      rowHeader: true,
      cell: (p) => (
        <>
          {className(p.effect_class)}
          <span className="block text-xs font-normal text-slate-500">{classHelp[p.effect_class]}</span>
        </>
      ),
    },
    ...durationFields.map((f): Column<Policy> => ({
      header: f.label,
      className: "tabular-nums",
      cell: (p) => show(p[f.field]),
    })),
    { header: "Approvals needed", className: "tabular-nums", cell: (p) => p.approval_quorum },
    { header: "Source", cell: (p) => <Source p={p} /> },
    edit.column((p) => `Edit the ${className(p.effect_class)} policy`),
  ];

  return (
    <PageSection
      id="policies-heading"
      title="Policies"
      description={
        <>
          Per effect class: when an invocation waiting in the queue shows as overdue, when Settle escalates it on its
          own (as <code>system</code>, in the audit trail), when an approval expires and is rejected — failing closed,
          so the runtime abandons it — and how many different people must approve. An approval with an expiry expires
          rather than escalating. A class without its own policy uses the default. Time in the queue counts from when
          its current status began. Within the duplicate window, a write of the same tool with the same arguments under
          a new idempotency key is a possible duplicate: the guard refuses it, and one reported without the guard waits
          in the queue for review (money, destructive and send).
        </>
      }
      notice={edit.notice}
    >
      <DataTable
        caption="Policies per effect class"
        columns={columns}
        rows={data.items}
        row={{
          key: (p) => p.effect_class,
          testId: "policy-row",
          data: (p) => ({ "data-class": p.effect_class }),
          top: true,
          render: edit.render((p, done) => <EditRow policy={p} onDone={done} />),
        }}
        error={error}
      />
      {canEdit ? null : <p className="text-sm text-slate-600">Only admins change policies.</p>}

      <Subsection id="policy-changes-heading" title="Recent changes">
        {data.changes.length === 0 ? (
          <p className="text-sm text-slate-500">No policy has been changed yet.</p>
        ) : (
          <ul className="space-y-1" data-testid="policy-changes">
            {data.changes.map((c, i) => (
              <ChangeLine key={`${c.at}-${i}`} c={c} />
            ))}
          </ul>
        )}
      </Subsection>
    </PageSection>
  );
}
