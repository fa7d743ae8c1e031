import { stringifyExactJson } from "@/lib/json/exact";

// What changed between two JSON documents, member by member: an approver's edit of a call's arguments (in the
// dialog as they type, on the invocation page, the timeline and the audit trail). Values are shown as JSON text,
// so 50 and "50" differ on screen as they do to the tool; never rendered as HTML.

/** One changed member: `before` absent means it was added, `after` absent that it was removed. */
export type MemberChange = { path: string; before?: unknown; after?: unknown };

type Kind = "added" | "removed" | "changed";

export const changeKind = (c: MemberChange): Kind =>
  !("before" in c) ? "added" : !("after" in c) ? "removed" : "changed";

const kinds: Record<Kind, { sign: string; look: string }> = {
  added: { sign: "+", look: "bg-emerald-100 text-emerald-900" },
  removed: { sign: "−", look: "bg-rose-100 text-rose-900" },
  changed: { sign: "~", look: "bg-amber-100 text-amber-900" },
};

function Value({ value, side }: { value: unknown; side: "before" | "after" }) {
  const look =
    side === "before" ? "bg-rose-50 text-rose-900 line-through decoration-rose-400" : "bg-emerald-50 text-emerald-900";
  return (
    <code className={`whitespace-pre-wrap break-all rounded px-1 py-0.5 font-mono text-xs ${look}`}>
      {stringifyExactJson(value)}
    </code>
  );
}

const none = <span className="text-xs text-slate-400">—</span>;

/** The changes as a small table (member, before, after), each marked added, removed or changed; `caption` names it. */
export function ChangesDiff({
  changes,
  caption,
  testId = "changes-diff",
}: {
  changes: readonly MemberChange[];
  caption: string;
  testId?: string;
}) {
  return (
    <table data-testid={testId} className="w-full table-fixed border-collapse text-left text-sm">
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr className="text-xs text-slate-500">
          <th scope="col" className="w-[38%] pb-1 pr-2 font-medium">
            Member
          </th>
          <th scope="col" className="pb-1 pr-2 font-medium">
            Before
          </th>
          <th scope="col" className="pb-1 font-medium">
            After
          </th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => {
          const kind = changeKind(c);
          return (
            <tr key={c.path} data-testid="diff-row" data-change={kind} className="border-t border-slate-100 align-top">
              <td className="py-1 pr-2">
                <span className="flex min-w-0 items-start gap-1.5">
                  <span
                    className={`shrink-0 rounded px-1 font-mono text-[11px] font-semibold ${kinds[kind].look}`}
                    title={kind}
                  >
                    {kinds[kind].sign} {kind}
                  </span>
                  <span className="break-all font-mono text-xs text-slate-900">{c.path}</span>
                </span>
              </td>
              <td className="py-1 pr-2">{"before" in c ? <Value value={c.before} side="before" /> : none}</td>
              <td className="py-1">{"after" in c ? <Value value={c.after} side="after" /> : none}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
