import { otherMethods, withRoute } from "@/lib/http/route";
import { auditQuerySchema, listAudit, streamAuditCsv } from "@/lib/audit/audit";

// The audit trail, newest first; `?format=csv` downloads every matching entry.
export const GET = withRoute({
  auth: "user",
  permission: "read",
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
