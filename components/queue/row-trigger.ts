import type { InvocationSummary } from "@/lib/invocations/read";
import type { ConsoleAction } from "../actions/action-meta";

// What the row's Actions button and the menu it loads share, without the menu's code.

export type RowActionsProps = {
  row: InvocationSummary;
  me: string;
  onAction: (row: InvocationSummary, action: ConsoleAction) => void;
};

export const triggerClass =
  "inline-flex items-center gap-1 whitespace-nowrap rounded-md border border-slate-300 bg-white px-2 py-1 text-sm text-slate-700 shadow-sm hover:bg-slate-50 data-[state=open]:bg-slate-100";

export const triggerLabel = (row: InvocationSummary) => `Actions for ${row.tool} ${row.invocation_id}`;
