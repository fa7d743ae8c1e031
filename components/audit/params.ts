// The audit page's URL filters: read by the server page, written by the
// filter form, and passed on unchanged to the API and the CSV export. A plain
// module (not a client one) so the server page gets the values themselves.

export type AuditParams = Record<string, string>;

export const auditParamNames = [
  "q",
  "actor",
  "action",
  "runtime",
  "tool",
  "from_status",
  "to_status",
  "from",
  "to",
] as const;

export function withParams(path: string, params: AuditParams, extra: Record<string, string> = {}): string {
  const qs = new URLSearchParams({ ...params, ...extra }).toString();
  return qs ? `${path}?${qs}` : path;
}
