"use client";

import type { InvocationSummary } from "@/lib/invocations/read";
import { actionMeta, actionsFor, type ConsoleAction } from "../actions/action-meta";
import { queueKeyFor } from "./shortcuts";

/**
 * The actions the state machine allows for one row, each with its key; there
 * is no "retry". A native select: keyboard-usable as it is, and no menu code
 * in the page's first load.
 */
export function RowActions({
  row,
  me,
  onAction,
}: {
  row: InvocationSummary;
  me: string;
  onAction: (row: InvocationSummary, action: ConsoleAction) => void;
}) {
  const actions = actionsFor(row.status, row.assignee, me);
  return (
    <select
      aria-label={`Act on ${row.tool} ${row.invocation_id}`}
      value=""
      onChange={(e) => {
        const action = e.target.value as ConsoleAction | "";
        if (action) onAction(row, action);
      }}
      className="w-20 cursor-pointer rounded border border-transparent bg-transparent py-0.5 text-xs text-slate-600 hover:border-slate-300 hover:bg-white"
    >
      <option value="">Act…</option>
      {actions.map((a) => {
        const key = queueKeyFor(a);
        return (
          <option key={a} value={a}>
            {actionMeta[a].label}
            {key ? ` (${key})` : ""}
          </option>
        );
      })}
    </select>
  );
}
