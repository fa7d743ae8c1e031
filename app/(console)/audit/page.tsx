import { AuditView } from "@/components/audit/audit-view";
import { auditParamNames, type AuditParams } from "@/components/audit/params";
import { requireUser } from "@/lib/identity/session";
import { auditFiltersSchema, listAudit, type AuditPage } from "@/lib/audit/audit";
import { listRuntimeNames } from "@/lib/identity/runtime-keys";

export const dynamic = "force-dynamic";

type SearchParams = Record<string, string | string[] | undefined>;

/** The filters named in the URL, blank ones left out, so the query key and the CSV link carry only what narrows. */
function paramsOf(search: SearchParams): AuditParams {
  const params: AuditParams = {};
  for (const name of auditParamNames) {
    const raw = search[name];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (value) params[name] = value;
  }
  return params;
}

export default async function AuditPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const { db } = await requireUser("read", "/audit");
  const params = paramsOf(await searchParams);
  const parsed = auditFiltersSchema.safeParse(params);
  const empty: AuditPage = { items: [], next_cursor: null };
  const [page, runtimes] = await Promise.all([
    parsed.success ? listAudit(db, parsed.data, null, 50) : empty,
    listRuntimeNames(db),
  ]);
  const invalid = parsed.success
    ? null
    : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
  return (
    <main className="console-frame py-8">
      <AuditView initial={page} params={params} runtimes={runtimes} invalid={invalid} />
    </main>
  );
}
