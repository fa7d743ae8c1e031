import "server-only";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import type { Prisma as P } from "../db/generated/client";
import { ADMIN_CHAIN, chainedInsertSql } from "../chain/entries";
import { redact } from "../redact/redact";
import { redactUrl } from "../redact/urls";
import type { AdminActionName } from "./admin-action-names";

// Admin actions (people, roles, keys, tokens, webhook endpoints, policies,
// tool catalog entries) go into the append-only admin_actions table with the
// state before and after, in the same transaction as the change where there
// is one: a change that is not in the audit trail did not happen. The audit
// page and CSV read them beside invocation actions (lib/audit/audit.ts).

export type AdminTarget =
  | "user"
  | "runtime_key"
  | "personal_token"
  | "webhook_endpoint"
  | "webhook_delivery"
  | "policy"
  | "tool_catalog_entry"
  | "notification_channel"
  | "retention"
  | "slack_settings"
  | "slack_link";

export type AdminActionInput = {
  actor: string;
  action: AdminActionName;
  targetType: AdminTarget;
  targetId: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
};

/** Targets whose `url` is itself a credential (whoever has it can post as Settle): kept with its key redacted. */
const URL_IS_A_KEY: ReadonlySet<string> = new Set<AdminTarget>(["webhook_endpoint", "notification_channel"]);

/**
 * A snapshot as the audit trail keeps and shows it: a webhook's or a channel's URL with its key redacted
 * (lib/redact/urls.ts; applied again when read, for entries written before the rule).
 */
export function shownSnapshot(targetType: string, snapshot: Record<string, unknown>): Record<string, unknown> {
  if (!URL_IS_A_KEY.has(targetType) || typeof snapshot.url !== "string") return snapshot;
  return { ...snapshot, url: redactUrl(snapshot.url) };
}

// Every entry joins the admin chain (lib/chain) in the statement that writes it; the chain's head stays locked
// until the change commits, so admin changes are written one after another (they are rare).
const insertEntry = chainedInsertSql(
  "admin",
  `'${ADMIN_CHAIN}'`,
  `SELECT 1 AS ord, gen_random_uuid() AS id, $1::text AS actor, $2::text AS action, $3::text AS target_type,
          $4::text AS target_id, $5::jsonb AS before, $6::jsonb AS after, now() AS at`,
  ["id", "actor", "action", "target_type", "target_id", "before", "after", "at"],
);

/** Writes one entry. Pass the transaction when the change has one. Secrets never go in: values are redacted. */
export async function recordAdminAction(sql: Sql, input: AdminActionInput): Promise<void> {
  const snapshot = (v: Record<string, unknown> | null | undefined) =>
    v == null ? null : JSON.stringify(redact(shownSnapshot(input.targetType, v)));
  await sql.query(insertEntry, [
    input.actor,
    input.action,
    input.targetType,
    input.targetId,
    snapshot(input.before),
    snapshot(input.after),
  ]);
}

/**
 * Deletes the row `entry.targetId` of `table` (one of Settle's own table names, never input) and records who did,
 * in one transaction. False, with nothing written, when no such row is left (deleted by someone else since it was
 * read: theirs is the entry); the caller answers its own 404.
 */
export async function deleteAudited(db: Db, table: string, entry: AdminActionInput): Promise<boolean> {
  return db.driver.transaction(async (tx) => {
    const deleted = await tx.query(`DELETE FROM ${table} WHERE id = $1::uuid RETURNING id`, [entry.targetId]);
    if (deleted.length === 0) return false;
    await recordAdminAction(tx, entry);
    return true;
  });
}

export type AdminAuditRow = {
  id: string;
  at: Date;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  before: unknown;
  after: unknown;
};

export type AdminAuditFilters = { actor?: string; action?: string[]; q?: string; from?: Date; to?: Date };

/** Admin entries matching the filters that apply to them, newest first, after `cursor`. */
export async function listAdminActions(
  db: Db,
  filters: AdminAuditFilters,
  cursor: { at: Date; id: string } | null,
  take: number,
): Promise<AdminAuditRow[]> {
  const and: P.AdminActionWhereInput[] = [];
  if (filters.actor) and.push({ actor: { contains: filters.actor, mode: "insensitive" } });
  if (filters.action) and.push({ action: { in: filters.action } });
  if (filters.q) and.push({ targetId: { contains: filters.q, mode: "insensitive" } });
  if (filters.from) and.push({ at: { gte: filters.from } });
  if (filters.to) and.push({ at: { lt: filters.to } });
  if (cursor) and.push({ OR: [{ at: { lt: cursor.at } }, { at: cursor.at, id: { lt: cursor.id } }] });
  return db.prisma.adminAction.findMany({ where: { AND: and }, orderBy: [{ at: "desc" }, { id: "desc" }], take });
}
