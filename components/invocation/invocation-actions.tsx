"use client";

import { useEffect, useMemo, useState } from "react";
import type { InvocationView } from "@/lib/invocations/read";
import { ActionDialog, type ActionTarget } from "@/components/actions/action-dialog";
import { actionMeta, actionsFor, consoleActionOrder, type ConsoleAction } from "@/components/actions/action-meta";
import { useCan, useCurrentUser } from "@/components/current-user";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { isUnsettled } from "@/lib/outcome/status";
import { approvalArguments } from "@/components/actions/edited-arguments";

// What the operator can do here: only the actions the state machine allows
// from this status, each with its key. The form captures the version on
// screen when it opens, so a change by someone else in the meantime is a
// "someone else changed this" refusal, never an overwrite. There is no retry.

const primary = new Set<ConsoleAction>(["request_verification", "approve"]);

/** What a decision is about: the call as the page shows it, with the arguments an approval approves. */
function targetOf(inv: InvocationView): ActionTarget {
  return {
    invocation_id: inv.invocation_id,
    runtime: inv.runtime,
    version: inv.version,
    status: inv.status,
    tool: inv.tool,
    summary: inv.summary,
    ...approvalTarget(inv),
  };
}

/** What an approval approves here: the edit pending approval, else the call's own arguments; its expiry and quorum. */
function approvalTarget(inv: InvocationView): Pick<ActionTarget, "arguments" | "editedBy" | "expiresAt" | "quorum"> {
  const found = approvalArguments(inv);
  return {
    arguments: found.arguments,
    editedBy: found.editedBy,
    expiresAt: inv.sla?.expires_at ?? null,
    quorum: inv.approvals?.quorum,
  };
}

function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

function Key({ k }: { k: string }) {
  return (
    <kbd className="rounded border border-slate-300 bg-slate-50 px-1 font-mono text-[11px] font-medium text-slate-700 shadow-[0_1px_0_rgb(203_213_225)]">
      {k}
    </kbd>
  );
}

export function InvocationActions({ inv }: { inv: InvocationView }) {
  const me = useCurrentUser();
  const mayAct = useCan("act");
  const [open, setOpen] = useState<{ action: ConsoleAction; target: ActionTarget } | null>(null);
  const [help, setHelp] = useState(false);
  // The same person cannot approve twice (the server refuses ALREADY_APPROVED): do not offer it.
  const approvedByMe = inv.approvals?.by.includes(me.email) ?? false;
  const allowed = useMemo(
    () =>
      mayAct ? actionsFor(inv.status, inv.assignee, me.email).filter((a) => !(a === "approve" && approvedByMe)) : [],
    [mayAct, inv.status, inv.assignee, me.email, approvedByMe],
  );

  const start = (action: ConsoleAction) =>
    setOpen({
      action,
      target: targetOf(inv),
    });

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.metaKey || event.ctrlKey || event.altKey || isTyping(event.target)) return;
      if (open || help || document.querySelector('[role="dialog"]')) return;
      if (event.key === "?") {
        event.preventDefault();
        setHelp(true);
        return;
      }
      const action = allowed.find((a) => actionMeta[a].key === event.key);
      if (!action) return;
      event.preventDefault();
      setOpen({
        action,
        target: targetOf(inv),
      });
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [allowed, open, help, inv]);

  return (
    <section aria-labelledby="actions-heading" className="space-y-3 rounded-lg border border-slate-200 bg-white p-4">
      <div className="flex items-center justify-between gap-3">
        <h2 id="actions-heading" className="text-sm font-semibold">
          What you can do
        </h2>
        <Button size="sm" variant="ghost" onClick={() => setHelp(true)} aria-keyshortcuts="?">
          Keyboard shortcuts <Key k="?" />
        </Button>
      </div>
      {mayAct ? (
        <div className="flex flex-wrap gap-2" data-testid="invocation-actions">
          {allowed.map((a) => (
            <Button
              key={a}
              variant={primary.has(a) ? "primary" : "secondary"}
              onClick={() => start(a)}
              aria-keyshortcuts={actionMeta[a].key}
              title={actionMeta[a].help}
            >
              {actionMeta[a].label} <Key k={actionMeta[a].key} />
            </Button>
          ))}
        </div>
      ) : (
        <p className="text-sm text-slate-700">
          Your role is <strong>{me.role}</strong>: you can read everything here. Acting on an invocation needs the
          operator role.
        </p>
      )}
      {approvedByMe && inv.approvals ? (
        <p className="text-xs text-slate-600" data-testid="approved-by-me">
          You approved this. It needs {inv.approvals.quorum - inv.approvals.count} more approval
          {inv.approvals.quorum - inv.approvals.count === 1 ? "" : "s"} from someone else ({inv.approvals.count} of{" "}
          {inv.approvals.quorum} so far).
        </p>
      ) : null}
      {isUnsettled(inv.status) ? (
        <p className="text-xs text-slate-600">
          There is no retry here: whether this call took effect is not known, and a blind retry could do it twice.
          Settle it with evidence first; once it is settled as not committed, the runtime may retry with the same
          idempotency key.
        </p>
      ) : null}
      {open ? (
        <ActionDialog
          key={`${open.action}-${open.target.version}`}
          target={open.target}
          action={open.action}
          onClose={() => setOpen(null)}
        />
      ) : null}
      <Dialog
        open={help}
        onOpenChange={setHelp}
        title="Keyboard shortcuts"
        description="They work anywhere on this page except while you type in a field."
      >
        <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
          {consoleActionOrder.map((a) => (
            <div key={a} className="contents">
              <dt>
                <Key k={actionMeta[a].key} />
              </dt>
              <dd className={allowed.includes(a) ? "text-slate-900" : "text-slate-400"}>
                {actionMeta[a].label} — {actionMeta[a].help}
                {allowed.includes(a) ? "" : " (not available now)"}
              </dd>
            </div>
          ))}
          <dt>
            <Key k="?" />
          </dt>
          <dd>Show this list</dd>
        </dl>
        <div className="mt-4 flex justify-end">
          <Button onClick={() => setHelp(false)}>Close</Button>
        </div>
      </Dialog>
    </section>
  );
}
