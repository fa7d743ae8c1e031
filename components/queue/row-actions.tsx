"use client";

import * as Menu from "@radix-ui/react-dropdown-menu";
import { MoreHorizontal } from "lucide-react";
import type { InvocationSummary } from "@/lib/domain/invocations";
import { actionMeta, actionsFor, type ConsoleAction } from "../actions/action-meta";
import { queueKeyFor } from "./shortcuts";

/** The actions the state machine allows for one row, each with its key; there is no "retry". */
export function RowActions({ row, me, onAction }: { row: InvocationSummary; me: string; onAction: (row: InvocationSummary, action: ConsoleAction) => void }) {
  const actions = actionsFor(row.status, row.assignee, me);
  return (
    <Menu.Root modal={false}>
      <Menu.Trigger
        className="rounded p-1 text-slate-600 hover:bg-slate-200 hover:text-slate-900"
        aria-label={`Actions for ${row.tool} ${row.invocation_id}`}
      >
        <MoreHorizontal aria-hidden="true" className="h-4 w-4" />
      </Menu.Trigger>
      <Menu.Portal>
        <Menu.Content align="end" sideOffset={4} className="z-30 min-w-[14rem] rounded-md border border-slate-200 bg-white p-1 text-sm shadow-lg">
          {actions.map((a) => {
            const key = queueKeyFor(a);
            return (
              <Menu.Item
                key={a}
                onSelect={() => onAction(row, a)}
                className="flex cursor-default items-center justify-between gap-4 rounded px-2 py-1.5 outline-none data-[highlighted]:bg-slate-100"
              >
                {actionMeta[a].label}
                {key ? <kbd className="rounded border border-slate-300 px-1 font-mono text-[10px] text-slate-500">{key}</kbd> : null}
              </Menu.Item>
            );
          })}
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}
