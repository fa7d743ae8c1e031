import { otherMethods, withRoute } from "@/lib/http/route";
import { auditQuerySchema, listAudit, streamAuditCsv, auditPageSchema } from "@/lib/audit/audit";
import { csvSchema } from "@/lib/http/schemas";

// The audit trail, newest first; `?format=csv` downloads every matching entry.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  summary: "The audit trail, newest first",
  description: "`format=csv` streams every matching entry as CSV.",
  tags: ["Audit"],
  response: { 200: { schema: auditPageSchema, content: { "text/csv": csvSchema } } },
  query: auditQuerySchema,
  handler: async ({ db, query: { cursor, limit, format, ...filters } }) => {
    if (format === "json") return listAudit(db, filters, cursor, limit);
    const csv = await streamAuditCsv(db, filters);
    return new Response(csv.body, {
      headers: {
        "content-type": "text/csv; charset=utf-8; header=present",
        "content-disposition": `attachment; filename="${csv.filename}"`,
        "cache-control": "no-store",
      },
    });
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
