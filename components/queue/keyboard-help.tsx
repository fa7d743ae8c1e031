"use client";

import { Dialog } from "../ui/dialog";
import { Button } from "../ui/button";
import { actionMeta, consoleActionOrder } from "../actions/action-meta";
import { navigationKeys, queueKeyFor } from "./shortcuts";

const Key = ({ k }: { k: string }) => (
  <kbd className="inline-block min-w-[1.5rem] rounded border border-slate-300 bg-slate-50 px-1.5 py-0.5 text-center font-mono text-xs text-slate-800">
    {k}
  </kbd>
);

export function KeyboardHelp({ open, onClose, canAct }: { open: boolean; onClose: () => void; canAct: boolean }) {
  return (
    <Dialog
      open={open}
      onOpenChange={(o) => (o ? null : onClose())}
      title="Keyboard shortcuts"
      description="They work anywhere on the queue except while you type in a field."
    >
      <div className="grid gap-6 text-sm sm:grid-cols-2">
        <section aria-labelledby="keys-moving">
          <h3 id="keys-moving" className="mb-2 font-medium text-slate-900">
            Moving
          </h3>
          <dl className="space-y-1.5">
            {navigationKeys.map((n) => (
              <div key={n.what} className="flex items-start gap-3">
                <dt className="w-14 shrink-0">
                  {n.keys.map((k) => (
                    <Key key={k} k={k} />
                  ))}
                </dt>
                <dd className="text-slate-700">{n.what}</dd>
              </div>
            ))}
          </dl>
        </section>
        <section aria-labelledby="keys-acting">
          <h3 id="keys-acting" className="mb-2 font-medium text-slate-900">
            Acting on the focused row
          </h3>
          {canAct ? null : <p className="mb-2 text-slate-600">Your role can read the queue but not act on it.</p>}
          <dl className="space-y-1.5">
            {consoleActionOrder.map((a) => {
              const key = queueKeyFor(a);
              return (
                <div key={a} className="flex items-start gap-3">
                  <dt className="w-14 shrink-0">
                    {key ? <Key k={key} /> : <span className="text-xs text-slate-500">menu</span>}
                  </dt>
                  <dd className="text-slate-700">
                    {actionMeta[a].label}
                    {key ? null : <span className="text-slate-500"> — from the row’s ⋯ menu</span>}
                  </dd>
                </div>
              );
            })}
          </dl>
          <p className="mt-3 text-xs text-slate-500">
            Only the actions the invocation’s state allows open. There is no retry: an unknown outcome is verified,
            never re-sent blindly.
          </p>
        </section>
      </div>
      <div className="mt-5 flex justify-end">
        <Button onClick={onClose}>Close</Button>
      </div>
    </Dialog>
  );
}
