import type { InvocationView } from "@/lib/invocations/read";
import { StatusChange } from "@/components/status-badge";
import { entryActionName } from "@/components/timeline/event-text";
import { ActionExtras } from "@/components/actions/action-extras";
import { formatDateTime } from "@/components/timeline/format";
import { DataTable, type Column } from "@/components/ui/data-table";

// Every action taken on this invocation, oldest first: append-only, as stored.

type Action = InvocationView["actions"][number];

const columns: Array<Column<Action>> = [
  {
    header: "When",
    className: "nowrap text-xs tabular-nums",
    cell: (a) => <time dateTime={a.at}>{formatDateTime(a.at)}</time>,
  },
  { header: "Who", className: "break-all text-xs", cell: (a) => a.actor },
  { header: "Action", className: "nowrap", cell: (a) => entryActionName(a) },
  {
    header: "From → to",
    className: "nowrap",
    cell: (a) => <StatusChange from={a.from_status} to={a.to_status} />,
  },
  {
    header: "Note, edit, message to the agent",
    className: "max-w-xl break-words text-slate-800",
    cell: (a) => (
      <>
        {a.note ? <p className="whitespace-pre-wrap">{a.note}</p> : null}
        <ActionExtras entry={a} />
      </>
    ),
  },
];

export function AuditTrail({ actions }: { actions: InvocationView["actions"] }) {
  return (
    <DataTable
      caption="Audit trail of this invocation, oldest first"
      testId="audit-trail"
      columns={columns}
      rows={actions}
      row={{ key: (a, i) => `${a.at}-${i}`, top: true }}
      size="dense"
      empty={<p className="text-sm text-slate-600">Nobody has acted on this invocation yet.</p>}
    />
  );
}
