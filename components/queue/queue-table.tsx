"use client";

import { createColumnHelper, flexRender, getCoreRowModel, useReactTable, type RowData } from "@tanstack/react-table";
import Link from "next/link";
import { memo, useMemo, type MouseEvent } from "react";
import type { InvocationSummary } from "@/lib/invocations/read";
import type { QueueItem } from "@/lib/queue/queue";
import { irreversibleEffectClasses } from "@/lib/outcome/queue-order";
import { SlaNote } from "../sla-note";
import { tableHeadClass } from "../ui/data-table";
import { CommitStateLabel, StatusBadge } from "../status-badge";
import { effectClassLabel, formatAge, headline, invocationHref, nextActionLabel, rowKey } from "./filters";
import { RowActions } from "./row-actions";
import type { ConsoleAction } from "../actions/action-meta";
import { InvocationId } from "../ui/invocation-id";

declare module "@tanstack/react-table" {
  // Declaration merging with TanStack's own TableMeta needs an interface, with its type parameter.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars, @typescript-eslint/consistent-type-definitions
  interface TableMeta<TData extends RowData> {
    asOf: string;
    me: string;
    selected: ReadonlySet<string>;
    onToggle: (key: string, event: MouseEvent) => void;
    onAction: (row: InvocationSummary, action: ConsoleAction) => void;
  }
}

const column = createColumnHelper<QueueItem>();
const cellClass = "px-1.5 py-1.5 align-top";

function buildColumns(canAct: boolean) {
  return [
    ...(canAct
      ? [
          column.display({
            id: "select",
            header: () => <span className="sr-only">Selected</span>,
            cell: ({ row, table }) => {
              const key = row.id;
              const checked = table.options.meta!.selected.has(key);
              return (
                <input
                  type="checkbox"
                  className="mt-0.5 h-4 w-4"
                  checked={checked}
                  aria-label={`Select ${row.original.tool} ${row.original.invocation_id}`}
                  onChange={() => undefined}
                  onClick={(e) => table.options.meta!.onToggle(key, e)}
                />
              );
            },
          }),
        ]
      : []),
    column.accessor("status", {
      header: "Status",
      cell: ({ row }) => (
        <div className="space-y-0.5">
          <StatusBadge status={row.original.status} />
          {row.original.conflict ? (
            <div className="text-xs font-semibold text-rose-700">⚠ conflicting evidence</div>
          ) : null}
          {row.original.duplicate_review === "open" ? (
            <div
              className="text-xs font-semibold text-amber-800"
              data-testid="possible-duplicate"
              title={`The same call (tool and arguments) as ${row.original.possible_duplicate_of ?? "an earlier one"}, under another key`}
            >
              ⚠ possible duplicate effect
            </div>
          ) : null}
          {row.original.ran_with_other_arguments ? (
            <div className="text-xs font-semibold text-rose-700" data-testid="args-mismatch">
              ⚠ ran with arguments other than those approved
            </div>
          ) : null}
        </div>
      ),
    }),
    column.accessor("commit_state", {
      header: "Commit state",
      cell: ({ getValue }) => <CommitStateLabel state={getValue()} />,
    }),
    column.accessor("effect_class", {
      header: "Class",
      cell: ({ getValue }) => {
        const c = getValue();
        const loud = c !== null && (irreversibleEffectClasses as readonly string[]).includes(c);
        return (
          <span className={`whitespace-nowrap text-xs ${loud ? "font-semibold text-slate-900" : "text-slate-600"}`}>
            {effectClassLabel(c)}
          </span>
        );
      },
    }),
    column.accessor("tool", {
      header: "Tool",
      cell: ({ row }) => (
        // A long tool name breaks and the summary takes the cell's width, not its own: the column can narrow, so
        // the Actions column stays on screen at 1440 px with a scroll bar.
        <div className="max-w-[17rem]">
          <Link
            href={invocationHref(row.original.invocation_id, row.original.runtime)}
            className="font-medium text-slate-900 [overflow-wrap:anywhere] hover:underline"
          >
            {row.original.tool}
          </Link>
          {row.original.summary ? (
            <div
              data-testid="call-summary"
              className="w-0 min-w-full truncate text-xs text-slate-600"
              title={row.original.summary}
            >
              {row.original.summary}
            </div>
          ) : null}
        </div>
      ),
    }),
    column.accessor("task_id", {
      header: "Task / invocation",
      cell: ({ row }) => (
        <div className="max-w-[10rem] font-mono text-xs">
          {row.original.trace ? (
            <div className="truncate" title={`trace ${row.original.trace.trace_id}`} data-testid="trace-task">
              <span className="font-sans font-medium">{row.original.trace.service ?? "OpenTelemetry"}</span> · trace{" "}
              {row.original.trace.trace_id.slice(0, 8)}…
            </div>
          ) : (
            <div className="truncate" title={row.original.task_id}>
              {row.original.task_id}
            </div>
          )}
          <div className="truncate text-slate-500">
            <InvocationId id={row.original.invocation_id} short />
          </div>
        </div>
      ),
    }),
    column.accessor("next_action", {
      header: "Next action",
      cell: ({ getValue }) => <span className="block max-w-[6.5rem] text-xs">{nextActionLabel(getValue())}</span>,
    }),
    column.accessor("attempt_count", {
      header: () => <span title="Transport attempts reported">Tries</span>,
      cell: ({ getValue }) => <span className="block text-right tabular-nums">{getValue()}</span>,
    }),
    column.accessor("status_since", {
      header: () => (
        <span title="How long it has waited in this status; overdue and when it escalates, by the policy of its effect class">
          Age
        </span>
      ),
      cell: ({ getValue, row, table }) => (
        <>
          <time dateTime={getValue()} title={`since ${getValue()}`} className="whitespace-nowrap tabular-nums">
            {formatAge(getValue(), table.options.meta!.asOf)}
          </time>
          <SlaNote sla={row.original.sla} now={table.options.meta!.asOf} />
        </>
      ),
    }),
    column.accessor("runtime", {
      header: "Runtime",
      cell: ({ getValue }) => (
        <span className="block max-w-[9rem] truncate whitespace-nowrap text-xs" title={getValue()}>
          {getValue()}
        </span>
      ),
    }),
    column.accessor("assignee", {
      header: "Assignee",
      cell: ({ getValue, table }) => {
        const a = getValue();
        if (!a) return <span className="text-xs text-slate-400">—</span>;
        return (
          <span className="block max-w-[10rem] truncate text-xs" title={a}>
            {a === table.options.meta!.me ? "you" : a}
          </span>
        );
      },
    }),
    column.accessor("user_message", {
      header: "Runtime says",
      cell: ({ getValue }) => {
        const m = getValue();
        // Shown as text only: React escapes it, and it is never a link or markup.
        return m ? (
          <span className="line-clamp-2 max-w-[14rem] text-xs text-slate-700" title={m}>
            {m}
          </span>
        ) : (
          <span className="text-xs text-slate-400">—</span>
        );
      },
    }),
    ...(canAct
      ? [
          column.display({
            id: "actions",
            header: () => <span className="sr-only">Actions</span>,
            cell: ({ row, table }) => (
              <RowActions row={row.original} me={table.options.meta!.me} onAction={table.options.meta!.onAction} />
            ),
          }),
        ]
      : []),
  ];
}

type Props = {
  items: QueueItem[];
  asOf: string;
  me: string;
  canAct: boolean;
  selected: ReadonlySet<string>;
  focusedKey: string | null;
  onFocusRow: (key: string) => void;
  onToggle: (key: string, event: MouseEvent) => void;
  onAction: (row: InvocationSummary, action: ConsoleAction) => void;
  /** The whole row opens its invocation (Enter does too, from the keyboard). */
  onOpen: (row: QueueItem) => void;
};

/** A click that should not open the row: on a control of its own, or the end of selecting its text. */
function clickedOwnControl(event: MouseEvent): boolean {
  const target = event.target as HTMLElement;
  if (target.closest("a, button, input, select, textarea, label, [role=menu], [role=menuitem]")) return true;
  return (window.getSelection()?.toString() ?? "") !== "";
}

export const QueueTable = memo(function QueueTable({
  items,
  asOf,
  me,
  canAct,
  selected,
  focusedKey,
  onFocusRow,
  onToggle,
  onAction,
  onOpen,
}: Props) {
  const columns = useMemo(() => buildColumns(canAct), [canAct]);
  const table = useReactTable({
    data: items,
    columns,
    getRowId: rowKey,
    getCoreRowModel: getCoreRowModel(),
    meta: { asOf, me, selected, onToggle, onAction },
  });

  return (
    <table
      className="w-full border-separate border-spacing-0 text-left text-sm"
      aria-label="Queue"
      aria-describedby="queue-keys-hint"
    >
      <thead className={`sticky top-0 z-10 ${tableHeadClass}`}>
        {table.getHeaderGroups().map((group) => (
          <tr key={group.id}>
            {group.headers.map((h) => (
              <th key={h.id} scope="col" className="border-b border-slate-200 px-1.5 py-2 font-medium">
                {flexRender(h.column.columnDef.header, h.getContext())}
              </th>
            ))}
          </tr>
        ))}
      </thead>
      <tbody>
        {table.getRowModel().rows.map((row) => {
          const focused = row.id === focusedKey;
          const isSelected = selected.has(row.id);
          return (
            <tr
              key={row.id}
              data-testid="invocation-row"
              data-key={row.id}
              data-focused={focused || undefined}
              tabIndex={focused ? 0 : -1}
              onFocus={() => onFocusRow(row.id)}
              onClick={(event) => {
                if (event.button !== 0 || clickedOwnControl(event)) return;
                // A modified click opens a new tab, as a link would.
                if (event.ctrlKey || event.metaKey || event.shiftKey)
                  window.open(invocationHref(row.original.invocation_id, row.original.runtime), "_blank");
                else onOpen(row.original);
              }}
              className={[
                "cursor-pointer hover:bg-slate-100/60 border-b border-slate-100 outline-none focus-visible:ring-2 focus-visible:ring-inset focus-visible:ring-indigo-600",
                isSelected ? "bg-indigo-50/70" : headline(row.original.status) ? "bg-white" : "bg-slate-50/40",
                focused ? "shadow-[inset_3px_0_0_0_var(--color-indigo-600)]" : "",
              ].join(" ")}
            >
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id} className={`${cellClass} border-b border-slate-100`}>
                  {flexRender(cell.column.columnDef.cell, cell.getContext())}
                </td>
              ))}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
});
