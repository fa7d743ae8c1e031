"use client";

import * as DropdownMenu from "@radix-ui/react-dropdown-menu";
import { actionMeta, actionsFor } from "../actions/action-meta";
import { queueKeyFor } from "./shortcuts";
import { triggerClass, triggerLabel, type RowActionsProps } from "./row-trigger";

/**
 * The actions the state machine allows for one row, each with its key; there is no "retry". A real menu
 * (Radix: arrow keys, typeahead, Escape, focus returned to the button), at the page's reading size. Loaded
 * when a row's menu is first opened (row-actions.tsx), so the queue's first load does not carry it.
 */
export function RowMenu({ row, me, onAction }: RowActionsProps) {
  const actions = actionsFor(row.status, row.assignee, me);
  return (
    <DropdownMenu.Root modal={false} defaultOpen>
      <DropdownMenu.Trigger aria-label={triggerLabel(row)} className={triggerClass}>
        Actions <span aria-hidden="true">▾</span>
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          align="end"
          sideOffset={4}
          className="z-50 min-w-[14rem] rounded-md border border-slate-200 bg-white p-1 text-sm shadow-lg"
        >
          {actions.map((a) => {
            const key = queueKeyFor(a);
            return (
              <DropdownMenu.Item
                key={a}
                onSelect={() => onAction(row, a)}
                className="flex cursor-pointer select-none items-center justify-between gap-6 rounded px-2.5 py-1.5 text-slate-800 outline-none data-[highlighted]:bg-slate-100"
              >
                {actionMeta[a].label}
                {key ? (
                  <kbd className="rounded border border-slate-300 px-1 font-mono text-xs text-slate-500">{key}</kbd>
                ) : null}
              </DropdownMenu.Item>
            );
          })}
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
