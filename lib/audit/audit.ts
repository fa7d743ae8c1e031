import "server-only";
import { z } from "zod";
import { commaList } from "../outcome/list-param";
import type { Db } from "../db/client";
import type { Prisma as P } from "../db/generated/client";
import { storableIso } from "../db/storable";
import { listAdminActions, shownSnapshot, type AdminAuditRow } from "./admin";
import { decodeTimeIdCursor, encodeTimeIdCursor, type TimeIdCursor } from "../db/cursor";
import { type InvocationStatus } from "../outcome/status";
import { argumentEditSchema, invocationStatusSchema } from "../outcome/vocabulary";
import { stringifyExactJson } from "../json/exact";

// The audit trail, newest first: every entry of the append-only
// `invocation_actions` table with the invocation it touched, and every admin
// action (`admin_actions`: people, keys, tokens, webhooks, policies) with its
// state before and after. The console's Audit page, its API and its CSV
// export all read through here.

const time = z.string().meta({ format: "date-time" });

export const auditEntrySchema = z
  .object({
    id: z.string(),
    kind: z
      .enum(["invocation", "admin"])
      .describe(
        "invocation: an action on an invocation; admin: a change to people, keys, tokens, webhooks or policies.",
      ),
    at: time,
    actor: z.string(),
    action: z.string(),
    result: z.string().nullable().describe("record_verification: found, absent or inconclusive."),
    commit_state: z.string().nullable().describe("mark_reconciled: committed or not_committed."),
    assignee: z.string().nullable().describe("assign: who it was assigned to."),
    reply: z
      .string()
      .nullable()
      .describe("reject, escalate: the message to the agent it carried (the decision API hands it to the model)."),
    edit: argumentEditSchema
      .nullable()
      .describe("approve with edits: the members the approver changed in the arguments, each before and after."),
    from_status: invocationStatusSchema.nullable(),
    to_status: invocationStatusSchema.nullable(),
    note: z.string().nullable(),
    version: z.number().int().nullable().describe("The invocation's version after this action."),
    invocation_id: z.string().nullable(),
    task_id: z.string().nullable(),
    runtime: z.string().nullable(),
    tool: z.string().nullable(),
    effect_class: z.string().nullable(),
    target_type: z
      .string()
      .nullable()
      .describe(
        "admin: user, runtime_key, personal_token, webhook_endpoint, webhook_delivery, policy or tool_catalog_entry.",
      ),
    target_id: z.string().nullable().describe("admin: the email, key or token prefix, endpoint id or effect class."),
    before: z.record(z.string(), z.unknown()).nullable().describe("admin: the state before (secrets never included)."),
    after: z.record(z.string(), z.unknown()).nullable().describe("admin: the state after."),
  })
  .meta({ id: "AuditEntry" });
export type AuditEntry = z.infer<typeof auditEntrySchema>;

export const auditPageSchema = z
  .object({ items: z.array(auditEntrySchema), next_cursor: z.string().nullable() })
  .meta({ id: "AuditPage" });
export type AuditPage = z.infer<typeof auditPageSchema>;

// An HTML form sends every field, filled or not: an empty one means "any".
const blankIsAbsent = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === "" ? undefined : v), schema.optional());

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

// JavaScript turns 2026-02-30 into March 2nd; a filter should say it is no date.
function realDay(s: string): boolean {
  const day = new Date(`${s.slice(0, 10)}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === s.slice(0, 10);
}

/** A plain date is a whole UTC day: `from` starts at its midnight, `to` includes it. */
const boundary = (end: boolean) =>
  z
    .string()
    .trim()
    .refine((s) => (DAY.test(s) || (INSTANT.test(s) && !Number.isNaN(Date.parse(s)))) && realDay(s), {
      message: "use a date (2026-11-29) or a time with its offset (2026-11-29T05:12:04Z)",
    })
    .transform((s, ctx) => {
      const midnight = new Date(`${s.slice(0, 10)}T00:00:00Z`);
      const at = !DAY.test(s) ? new Date(s) : end ? new Date(midnight.getTime() + 86_400_000) : midnight;
      // A bound the database cannot hold (year 0, year 10000) is the request's mistake, said as such.
      if (storableIso(at.getTime()) === null) {
        ctx.addIssue({ code: "custom", message: "use a time between 0001-01-01 and 9999-12-30" });
        return z.NEVER;
      }
      return at;
    });

type Cursor = TimeIdCursor;
export const encodeAuditCursor = encodeTimeIdCursor;
const decodeAuditCursor = decodeTimeIdCursor;

export const auditFiltersSchema = z.object({
  actor: blankIsAbsent(z.string().trim().min(1).max(320)).describe("Part of the actor's email (case-insensitive)."),
  action: blankIsAbsent(commaList(z.string().regex(/^[a-z_]{1,64}$/))).describe(
    "One or more actions, comma-separated.",
  ),
  from_status: blankIsAbsent(commaList(invocationStatusSchema)).describe("Status before the action; comma-separated."),
  to_status: blankIsAbsent(commaList(invocationStatusSchema)).describe("Status after the action; comma-separated."),
  runtime: blankIsAbsent(z.string().trim().min(1).max(200)),
  tool: blankIsAbsent(z.string().trim().min(1).max(200)),
  q: blankIsAbsent(z.string().trim().min(1).max(512)).describe("Part of a task or invocation id."),
  from: blankIsAbsent(boundary(false)).describe("From this time (inclusive); a plain date starts at 00:00 UTC."),
  to: blankIsAbsent(boundary(true)).describe("Until this time (exclusive); a plain date includes that whole UTC day."),
});
export type AuditFilters = z.infer<typeof auditFiltersSchema>;

export const auditQuerySchema = auditFiltersSchema.extend({
  cursor: blankIsAbsent(
    z
      .string()
      .max(512)
      .transform((s, ctx) => {
        const c = decodeAuditCursor(s);
        if (!c)
          ctx.addIssue({ code: "custom", message: "not a cursor from this API: pass next_cursor as it was given" });
        return c ?? { at: new Date(0), id: "" };
      }),
  ),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  format: z.enum(["json", "csv"]).default("json").describe("csv: every matching entry as a CSV download, streamed."),
});
export type AuditQuery = z.infer<typeof auditQuerySchema>;

function whereOf(f: AuditFilters, cursor: Cursor | null | undefined): P.ActionWhereInput {
  const and: P.ActionWhereInput[] = [];
  if (f.actor) and.push({ actor: { contains: f.actor, mode: "insensitive" } });
  if (f.action) and.push({ action: { in: f.action } });
  if (f.from_status) and.push({ fromStatus: { in: f.from_status } });
  if (f.to_status) and.push({ toStatus: { in: f.to_status } });
  if (f.from) and.push({ at: { gte: f.from } });
  if (f.to) and.push({ at: { lt: f.to } });
  const invocation: P.InvocationWhereInput = {};
  if (f.runtime) invocation.runtime = { name: f.runtime };
  if (f.tool) invocation.tool = f.tool;
  if (f.q) {
    invocation.OR = [
      { invocationId: { contains: f.q, mode: "insensitive" } },
      { taskId: { contains: f.q, mode: "insensitive" } },
    ];
  }
  if (Object.keys(invocation).length > 0) and.push({ invocation });
  if (cursor) and.push({ OR: [{ at: { lt: cursor.at } }, { at: cursor.at, id: { lt: cursor.id } }] });
  return { AND: and };
}

const include = {
  invocation: {
    select: { invocationId: true, taskId: true, tool: true, effectClass: true, runtime: { select: { name: true } } },
  },
} as const;
type Row = P.ActionGetPayload<{ include: typeof include }>;

type Detail = Pick<AuditEntry, "result" | "commit_state" | "assignee" | "reply" | "edit">;

/** What the entry's payload says beyond its columns (lib/invocations/act.ts writes it): the action's fields, an edit's diff. */
function detailOf(payload: unknown): Detail {
  const p = (payload ?? {}) as { action?: Record<string, unknown>; edit?: { changes?: unknown } };
  const action = p.action ?? {};
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  const changes = Array.isArray(p.edit?.changes)
    ? (p.edit.changes as NonNullable<AuditEntry["edit"]>["changes"])
    : null;
  return {
    result: text(action.result),
    commit_state: text(action.commit_state),
    assignee: text(action.assignee),
    reply: text(action.reply),
    edit: changes ? { changes } : null,
  };
}

/** What every entry begins with, an invocation's action or an admin change. */
function headOf(row: { id: string; at: Date; actor: string; action: string }, kind: AuditEntry["kind"]) {
  return { id: row.id, kind, at: row.at.toISOString(), actor: row.actor, action: row.action };
}

// Prisma reads jsonb with JSON.parse, which rounds an integer past 2^53. An edit's before and after are a caller's
// arguments and an approver's digits (decision 039): the payloads that hold one are read again exactly, as the
// invocation's own trail reads them. By the primary key, one statement for the page.
const EXACT_PAYLOADS = `
  SELECT id::text, payload FROM invocation_actions
   WHERE (runtime_id, id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))`;

/** Each row's payload, those with an edit read exactly. */
async function payloadsOf(db: Db, rows: Row[]): Promise<Map<string, unknown>> {
  const payloads = new Map<string, unknown>(rows.map((r) => [r.id, r.payload]));
  const edited = rows.filter((r) => asRecord(r.payload)?.edit);
  if (edited.length === 0) return payloads;
  const exact = await db.driver.query<{ id: string; payload: unknown }>(
    EXACT_PAYLOADS,
    [edited.map((r) => r.runtimeId), edited.map((r) => r.id)],
    { prepareAs: "settle_read_audit_edits", exactJson: true },
  );
  for (const r of exact) payloads.set(r.id, r.payload);
  return payloads;
}

function toEntry(row: Row, payload: unknown): AuditEntry {
  return {
    ...headOf(row, "invocation"),
    ...detailOf(payload),
    from_status: row.fromStatus as InvocationStatus,
    to_status: row.toStatus as InvocationStatus,
    note: row.note,
    version: row.seq,
    invocation_id: row.invocation.invocationId,
    task_id: row.invocation.taskId,
    runtime: row.invocation.runtime.name,
    tool: row.invocation.tool,
    effect_class: row.invocation.effectClass,
    target_type: null,
    target_id: null,
    before: null,
    after: null,
  };
}

const asRecord = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

const shown = (targetType: string, v: Record<string, unknown> | null) => (v ? shownSnapshot(targetType, v) : null);

function adminEntry(row: AdminAuditRow): AuditEntry {
  return {
    ...headOf(row, "admin"),
    result: null,
    commit_state: null,
    assignee: null,
    reply: null,
    edit: null,
    from_status: null,
    to_status: null,
    note: null,
    version: null,
    invocation_id: null,
    task_id: null,
    runtime: null,
    tool: null,
    effect_class: null,
    target_type: row.targetType,
    target_id: row.targetId,
    before: shown(row.targetType, asRecord(row.before)),
    after: shown(row.targetType, asRecord(row.after)),
  };
}

// Filters about invocations (status, runtime, tool) leave admin entries out.
const invocationOnly = (f: AuditFilters) => Boolean(f.from_status || f.to_status || f.runtime || f.tool);

const newestFirst = (a: AuditEntry, b: AuditEntry) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1);

/** One page of audit entries matching `filters`, newest first; `next_cursor` continues after the last one. */
export async function listAudit(
  db: Db,
  filters: AuditFilters,
  cursor: Cursor | null = null,
  limit = 50,
): Promise<AuditPage> {
  const [rows, adminRows] = await Promise.all([
    db.prisma.action.findMany({
      where: whereOf(filters, cursor),
      include,
      orderBy: [{ at: "desc" }, { id: "desc" }],
      take: limit + 1,
    }),
    invocationOnly(filters) ? [] : listAdminActions(db, filters, cursor, limit + 1),
  ]);
  const payloads = await payloadsOf(db, rows);
  const all = [...rows.map((r) => toEntry(r, payloads.get(r.id))), ...adminRows.map(adminEntry)].sort(newestFirst);
  const page = all.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page,
    next_cursor: all.length > limit && last ? encodeAuditCursor(new Date(last.at), last.id) : null,
  };
}

export const auditCsvColumns = [
  "time",
  "kind",
  "actor",
  "action",
  "result",
  "commit_state",
  "assignee",
  "from_status",
  "to_status",
  "note",
  "version",
  "runtime",
  "task_id",
  "invocation_id",
  "tool",
  "effect_class",
  "target_type",
  "target_id",
  "before",
  "after",
  "reply",
  "edit",
] as const;

/**
 * One CSV field (RFC 4180). A spreadsheet would run a cell that starts with
 * = + - @ tab or CR as a formula, so such a cell gets a leading apostrophe.
 */
export function csvField(value: string | number | null): string {
  let text = value === null ? "" : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A change with its members in reading order (the database keeps JSON keys in its own order). */
const readableChange = ({ path, ...c }: NonNullable<AuditEntry["edit"]>["changes"][number]) => ({
  path,
  ...("before" in c ? { before: c.before } : {}),
  ...("after" in c ? { after: c.after } : {}),
});

function csvRow(e: AuditEntry): string {
  const cells: Record<(typeof auditCsvColumns)[number], string | number | null> = {
    time: e.at,
    kind: e.kind,
    actor: e.actor,
    action: e.action,
    result: e.result,
    commit_state: e.commit_state,
    assignee: e.assignee,
    from_status: e.from_status,
    to_status: e.to_status,
    note: e.note,
    version: e.version,
    runtime: e.runtime,
    task_id: e.task_id,
    invocation_id: e.invocation_id,
    tool: e.tool,
    effect_class: e.effect_class,
    target_type: e.target_type,
    target_id: e.target_id,
    before: e.before ? stringifyExactJson(e.before) : null,
    after: e.after ? stringifyExactJson(e.after) : null,
    reply: e.reply,
    edit: e.edit ? stringifyExactJson(e.edit.changes.map(readableChange)) : null,
  };
  return `${auditCsvColumns.map((c) => csvField(cells[c])).join(",")}\r\n`;
}

export const CSV_PAGE_SIZE = 1000;

/**
 * Every entry matching `filters` as UTF-8 CSV, read a page at a time as the
 * client takes it, so a large export never sits in memory. The first page is
 * read before this returns: a database failure is still an error response,
 * not a truncated file.
 */
export async function streamAuditCsv(
  db: Db,
  filters: AuditFilters,
  now = new Date(),
): Promise<{ filename: string; body: ReadableStream<Uint8Array> }> {
  const encoder = new TextEncoder();
  let page: AuditPage | null = await listAudit(db, filters, null, CSV_PAGE_SIZE);
  let header = `${auditCsvColumns.join(",")}\r\n`;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!page) return controller.close();
      controller.enqueue(encoder.encode(header + page.items.map(csvRow).join("")));
      header = "";
      const next = page.next_cursor ? decodeAuditCursor(page.next_cursor) : null;
      try {
        page = next ? await listAudit(db, filters, next, CSV_PAGE_SIZE) : null;
      } catch (error) {
        // Headers are gone: all that is left is to break the download, never to end it as if complete.
        controller.error(error);
      }
    },
  });
  return { filename: `settle-audit-${now.toISOString().slice(0, 10)}.csv`, body };
}
