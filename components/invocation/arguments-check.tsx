"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import type { InvocationView } from "@/lib/invocations/read";
import { formatUtc } from "@/components/audit/time";
import { api } from "@/components/api";
import { useCan } from "@/components/current-user";
import { Button } from "@/components/ui/button";
import { FormDialog } from "@/components/ui/dialog";
import { TextArea } from "@/components/ui/field";
import { useShowUpdated } from "./show-updated";

// A call that ran with other arguments than a person approved: it waits in the queue, whatever its status,
// until someone checks what ran (in the system the runbook names) and says what they found.

function CheckDialog({ inv, onClose }: { inv: InvocationView; onClose: () => void }) {
  const [note, setNote] = useState("");
  const send = useMutation({
    mutationFn: () =>
      api.post("/api/v1/invocations/{invocation_id}/arguments-review", {
        params: { invocation_id: inv.invocation_id },
        body: { note: note.trim(), runtime: inv.runtime },
      }),
    onSuccess: useShowUpdated(inv, onClose),
  });
  return (
    <FormDialog
      title="I checked what ran"
      description="Say what you found: what actually happened with the other arguments, and what you did about it. It leaves the queue; the note is in the audit trail. The status does not change."
      submitLabel="Mark as checked"
      pendingLabel="Saving…"
      step={send}
      submitDisabled={note.trim() === ""}
      onSubmit={() => send.mutate()}
      onClose={onClose}
    >
      <TextArea
        label="What you found"
        value={note}
        onChange={(event) => setNote(event.target.value)}
        required
        maxLength={4000}
        rows={3}
      />
    </FormDialog>
  );
}

export function ArgumentsCheck({ inv }: { inv: InvocationView }) {
  const canAct = useCan("act");
  const [open, setOpen] = useState(false);
  if (!inv.arguments_review) return null;
  const checked = [...inv.actions].reverse().find((a) => a.action === "check_arguments");
  return (
    <section
      aria-labelledby="arguments-check-heading"
      className={`space-y-2 rounded-lg border p-4 ${inv.arguments_review === "open" ? "border-rose-300 bg-rose-50" : "border-slate-200 bg-white"}`}
    >
      <h2 id="arguments-check-heading" className="text-sm font-semibold">
        {inv.arguments_review === "open" ? "⚠ " : ""}It ran with arguments other than those approved
      </h2>
      {inv.arguments_review === "open" ? (
        <>
          <p className="text-sm text-slate-700">
            A person approved this call with one set of arguments; a later record reports others. Check what actually
            ran before trusting the outcome. It stays in the queue until someone has.
          </p>
          {canAct ? (
            <Button size="sm" onClick={() => setOpen(true)}>
              I checked what ran…
            </Button>
          ) : null}
        </>
      ) : checked ? (
        <p className="text-sm text-slate-700">
          Checked by {checked.actor} at {formatUtc(checked.at)}
          {checked.note ? `: ${checked.note}` : "."}
        </p>
      ) : null}
      {open ? <CheckDialog inv={inv} onClose={() => setOpen(false)} /> : null}
    </section>
  );
}
