import "server-only";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { publicUrl } from "../env";
import { verifyFor, type ToolCatalogEntry } from "../catalog/effect-class";
import type { EffectClass } from "../outcome/vocabulary";
import type { VerifyConfig } from "../outcome/verification";
import { invocationHref } from "../invocations/links";
import type { TransitionFacts } from "../webhooks/events";
import { notificationEventFor, type NotificationEvent } from "./events";
import type { NoticeFacts } from "./message";

// What each channel is to be told, collected as it happens: from the status changes the webhook fan-out
// claims (in its transaction, so a crash collects nothing twice or not at all), and from two scans the
// fan-out cannot see: calls that stalled (a time passing, not a change) and duplicate flags (an audit
// entry, not a change). Every item names its source, so a rescan inserts nothing twice.

/** How far back each scan looks again, for rows committed a little after their own time. */
const SCAN_OVERLAP_MS = 5 * 60_000;

type Candidate = {
  source: string;
  runtime_id: string;
  invocation_uid: string;
  effect_class: string | null;
  facts: NoticeFacts;
};

// One row per candidate per channel that hears of its runtime, class and event (an empty list: all).
const INSERT_ITEMS = `
  INSERT INTO notification_items (channel_id, source, event, invocation_uid, facts, created_at)
  SELECT c.id, it.source, it.facts->>'event', it.invocation_uid::uuid, it.facts, $2::timestamptz
    FROM jsonb_to_recordset($1::jsonb) AS it(source text, runtime_id text, invocation_uid text, effect_class text, facts jsonb)
    JOIN runtimes r ON r.id = it.runtime_id::uuid
    JOIN notification_channels c ON c.enabled
     AND (cardinality(c.runtimes) = 0 OR r.name = ANY(c.runtimes))
     AND (cardinality(c.effect_classes) = 0 OR it.effect_class = ANY(c.effect_classes))
     AND (cardinality(c.events) = 0 OR it.facts->>'event' = ANY(c.events))
  ON CONFLICT (channel_id, source) DO NOTHING
  RETURNING 1`;

async function insertItems(q: Pick<Sql, "query">, candidates: readonly Candidate[], now: Date): Promise<number> {
  if (candidates.length === 0) return 0;
  return (await q.query(INSERT_ITEMS, [JSON.stringify(candidates), now.toISOString()])).length;
}

export async function hasEnabledChannels(q: Pick<Sql, "query">): Promise<boolean> {
  const rows = await q.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM notification_channels WHERE enabled) AS any`,
  );
  return rows[0]?.any === true;
}

/**
 * Whether a runtime's tool has a verifier, by its catalog read through `q`: inside the fan-out's transaction
 * that is the transaction itself (the embedded database runs one statement at a time, so a read beside it
 * would wait for it forever).
 */
async function verifierCheck(
  q: Pick<Sql, "query">,
  runtimeIds: readonly string[],
): Promise<(runtimeId: string, tool: string) => boolean> {
  const rows = await q.query<{
    runtime_id: string;
    pattern: string;
    effect_class: EffectClass;
    verify: VerifyConfig | null;
  }>(
    `SELECT runtime_id::text AS runtime_id, pattern, effect_class, verify FROM tool_catalog_entries WHERE runtime_id = ANY($1::uuid[])`,
    [[...new Set(runtimeIds)]],
  );
  const catalogs = new Map<string, ToolCatalogEntry[]>();
  for (const row of rows) {
    const list = catalogs.get(row.runtime_id) ?? [];
    list.push({ pattern: row.pattern, effect_class: row.effect_class, verify: row.verify });
    catalogs.set(row.runtime_id, list);
  }
  return (runtimeId, tool) => verifyFor(catalogs.get(runtimeId) ?? [], tool) !== null;
}

const linkOf = (invocationId: string, runtime: string) => `${publicUrl()}${invocationHref(invocationId, runtime)}`;

export type TransitionWithRuntime = TransitionFacts & { runtimeId: string };

/** Called by the fan-out with the transitions it claimed, inside its transaction. */
export async function collectFromTransitions(
  tx: Pick<Sql, "query">,
  transitions: readonly TransitionWithRuntime[],
  now: Date,
): Promise<number> {
  if (transitions.length === 0 || !(await hasEnabledChannels(tx))) return 0;
  const verified = await verifierCheck(
    tx,
    transitions.map((t) => t.runtimeId),
  );
  const candidates: Candidate[] = [];
  for (const t of transitions) {
    const hasVerifier = verified(t.runtimeId, t.tool);
    const notice = notificationEventFor({ fromStatus: t.fromStatus, status: t.status, hasVerifier, reason: t.reason });
    if (!notice) continue;
    candidates.push({
      source: `t:${t.id}`,
      runtime_id: t.runtimeId,
      invocation_uid: t.invocationUid,
      effect_class: t.effectClass,
      facts: {
        ...notice,
        invocation_id: t.invocationId,
        task_id: t.taskId,
        runtime: t.runtime,
        tool: t.tool,
        effect_class: t.effectClass,
        status: t.status,
        summary: t.summary ?? null,
        since: t.at.toISOString(),
        link: linkOf(t.invocationId, t.runtime),
      },
    });
  }
  return insertItems(tx, candidates, now);
}

/** The invocation's facts as a notice names them (message.ts), with its keys and `since` as the row holds it. */
type ScannedRow = Omit<NoticeFacts, "event" | "why" | "since" | "link"> & {
  key: string;
  runtime_id: string;
  uid: string;
  since: Date;
};

const SCANNED_COLUMNS = `i.runtime_id::text AS runtime_id, i.id::text AS uid, i.invocation_id, i.task_id, r.name AS runtime,
  i.tool, i.effect_class, i.summary`;

// Pending calls whose stall time passed in the window: they became `stalled` (read-time status) then.
const STALLED = `
  SELECT i.id::text || ':' || (extract(epoch FROM i.stall_at) * 1000)::bigint AS key, ${SCANNED_COLUMNS},
         'stalled' AS status, i.stall_at AS since
    FROM invocations i JOIN runtimes r ON r.id = i.runtime_id
   WHERE i.status = 'pending' AND i.stall_at > $1::timestamptz AND i.stall_at <= $2::timestamptz
   ORDER BY i.stall_at LIMIT 5000`;

// Calls flagged as possible duplicates in the window.
const FLAGGED = `
  SELECT a.id::text AS key, ${SCANNED_COLUMNS}, i.status, a.at AS since
    FROM invocation_actions a JOIN invocations i ON i.id = a.invocation_uid JOIN runtimes r ON r.id = i.runtime_id
   WHERE a.action = 'flag_possible_duplicate' AND a.at > $1::timestamptz AND a.at <= $2::timestamptz
   ORDER BY a.at LIMIT 5000`;

async function markScanned(db: Db, name: string, now: Date): Promise<void> {
  await db.driver.query(
    `INSERT INTO notification_scans (name, at) VALUES ($1, $2::timestamptz)
     ON CONFLICT (name) DO UPDATE SET at = GREATEST(notification_scans.at, EXCLUDED.at)`,
    [name, now.toISOString()],
  );
}

async function scan(
  db: Db,
  name: string,
  sql: string,
  now: Date,
  toNotice: (row: ScannedRow, hasVerifier: boolean) => { event: NotificationEvent; why: string } | null,
): Promise<number> {
  const [mark] = await db.driver.query<{ at: Date }>(`SELECT at FROM notification_scans WHERE name = $1`, [name]);
  // The first scan starts now: what stalled before notifications were set up is in the queue already.
  const from = mark ? new Date(new Date(mark.at).getTime() - SCAN_OVERLAP_MS) : now;
  const rows = await db.driver.query<ScannedRow>(sql, [from.toISOString(), now.toISOString()]);
  const verified = await verifierCheck(
    db.driver,
    rows.map((r) => r.runtime_id),
  );
  const candidates: Candidate[] = [];
  for (const row of rows) {
    const notice = toNotice(row, verified(row.runtime_id, row.tool));
    if (!notice) continue;
    candidates.push({
      source: `${name}:${row.key}`,
      runtime_id: row.runtime_id,
      invocation_uid: row.uid,
      effect_class: row.effect_class,
      facts: {
        ...notice,
        invocation_id: row.invocation_id,
        task_id: row.task_id,
        runtime: row.runtime,
        tool: row.tool,
        effect_class: row.effect_class,
        status: row.status,
        summary: row.summary,
        since: new Date(row.since).toISOString(),
        link: linkOf(row.invocation_id, row.runtime),
      },
    });
  }
  const inserted = await insertItems(db.driver, candidates, now);
  await markScanned(db, name, now);
  return inserted;
}

/** Collects what the fan-out cannot see: stalls (unless a verifier will look first) and duplicate flags. */
export async function scanForNotices(db: Db, now: Date): Promise<{ stalled: number; duplicates: number }> {
  if (!(await hasEnabledChannels(db.driver))) {
    // Nobody to tell: a channel added later hears of what happens from then on, not of the backlog.
    await markScanned(db, "stall", now);
    await markScanned(db, "duplicate", now);
    return { stalled: 0, duplicates: 0 };
  }
  const stalled = await scan(db, "stall", STALLED, now, (_row, hasVerifier) =>
    hasVerifier ? null : { event: "unknown", why: "no outcome reported in time" },
  );
  const duplicates = await scan(db, "duplicate", FLAGGED, now, () => ({
    event: "possible_duplicate",
    why: "its arguments match an earlier call under another key",
  }));
  return { stalled, duplicates };
}
