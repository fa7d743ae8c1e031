import type { InvocationView } from "@/lib/invocations/read";
import { StatusBadge } from "@/components/status-badge";
import { actionName } from "@/components/timeline/event-text";
import { formatDateTime } from "@/components/timeline/format";

// Every action taken on this invocation, oldest first: append-only, as stored.

export function AuditTrail({ actions }: { actions: InvocationView["actions"] }) {
  if (actions.length === 0) {
    return <p className="text-sm text-slate-600">Nobody has acted on this invocation yet.</p>;
  }
  return (
    <div className="overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="w-full text-left text-sm" data-testid="audit-trail">
        <caption className="sr-only">Audit trail of this invocation, oldest first</caption>
        <thead className="bg-slate-50 text-xs uppercase tracking-wide text-slate-500">
          <tr>
            <th scope="col" className="px-3 py-2 font-medium">
              When
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Who
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Action
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              From → to
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Note
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {actions.map((a, i) => (
            <tr key={`${a.at}-${i}`} className="align-top">
              <td className="whitespace-nowrap px-3 py-2 text-xs tabular-nums">
                <time dateTime={a.at}>{formatDateTime(a.at)}</time>
              </td>
              <td className="break-all px-3 py-2 text-xs">{a.actor}</td>
              <td className="whitespace-nowrap px-3 py-2">{actionName(a.action)}</td>
              <td className="whitespace-nowrap px-3 py-2">
                {a.from_status === a.to_status ? (
                  <span className="inline-flex items-center gap-1">
                    <StatusBadge status={a.from_status} /> <span className="text-xs text-slate-500">unchanged</span>
                  </span>
                ) : (
                  <span className="inline-flex items-center gap-1">
                    <StatusBadge status={a.from_status} /> <span aria-label="to">→</span>{" "}
                    <StatusBadge status={a.to_status} />
                  </span>
                )}
              </td>
              <td className="max-w-md whitespace-pre-wrap break-words px-3 py-2 text-slate-800">{a.note ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
