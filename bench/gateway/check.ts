import pg from "pg";
import type { LedgerLine } from "../../packages/settle-mcp-gateway/test/shop/shop-tools";
import type { CallLog } from "../../packages/settle-mcp-gateway/src/tool-call";
import { identify } from "../../packages/settle-mcp-gateway/src/identity";
import type { IntentRun } from "./chaos";

// What the chaos run must show: every attempt the gateway sent to the shop
// has its outcome in Settle (nothing lost, however the run went: broken
// streams, crashes, Settle itself restarted), every denial is in Settle's
// guard_checks, and no intent has more than one business effect.

export type Verdict = {
  calls: number;
  log_lines: number;
  attempts_sent: number;
  attempts_lost: number;
  lost_examples: string[];
  denials: number;
  denials_unrecorded: number;
  local_denials: number;
  intents: number;
  duplicate_effects: number;
  duplicate_examples: string[];
  /** For each duplicate, what the gateway did with each call of that intent. */
  duplicate_trails: Record<string, string[]>;
  ends: Record<string, number>;
  decisions: Record<string, number>;
};

const count = <T extends string>(values: T[]) =>
  values.reduce<Record<string, number>>((acc, v) => ((acc[v] = (acc[v] ?? 0) + 1), acc), {});

/** A call that went to the shop: its outcome record must be in Settle. */
const sentUpstream = (l: CallLog) => l.upstream !== undefined && l.attempt !== null && l.invocation !== null;

export async function verify(
  databaseUrl: string,
  runtimeId: string,
  runs: IntentRun[],
  logs: CallLog[],
  ledger: LedgerLine[],
): Promise<Verdict> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const outcomes = new Set(
      (
        await client.query<{ event_id: string }>(
          `SELECT event_id FROM attempts WHERE runtime_id = $1 AND phase = 'outcome' AND event_id IS NOT NULL`,
          [runtimeId],
        )
      ).rows.map((r) => r.event_id.replace(/:late$/, "")),
    );
    const sent = logs.filter(sentUpstream);
    const lost = sent.filter((l) => !outcomes.has(`${l.invocation}:a${l.attempt}:outcome`));

    const denialRows = (
      await client.query<{ invocation_id: string; n: string }>(
        `SELECT invocation_id, count(*)::text AS n FROM guard_checks WHERE runtime_id = $1 AND NOT allow GROUP BY invocation_id`,
        [runtimeId],
      )
    ).rows;
    const recorded = new Map(denialRows.map((r) => [r.invocation_id, Number(r.n)]));
    // A call the guard turned down, whatever the gateway then did with it (joined, replayed, probed, refused).
    const denied = logs.filter(
      (l) => /^(denied:(?!.*local)|joined|replayed|probe:)/.test(l.decision) && !l.decision.includes("(local)"),
    );
    const expected = count(denied.map((l) => l.invocation ?? ""));
    let unrecorded = 0;
    for (const [invocation, n] of Object.entries(expected))
      unrecorded += Math.max(0, n - (recorded.get(invocation) ?? 0));

    const effectsByTag = new Map<string, number>();
    const tagOf = (l: LedgerLine) =>
      String(
        l.kind === "order"
          ? l.detail.customer
          : l.kind === "charge"
            ? l.detail.order_id
            : String(l.detail.to).replace(/@example\.com$/, ""),
      );
    for (const line of ledger) effectsByTag.set(tagOf(line), (effectsByTag.get(tagOf(line)) ?? 0) + 1);
    const duplicates = [...effectsByTag].filter(([, n]) => n > 1);

    return {
      calls: runs.reduce((n, r) => n + r.calls, 0),
      log_lines: logs.length,
      attempts_sent: sent.length,
      attempts_lost: lost.length,
      lost_examples: lost.slice(0, 5).map((l) => `${l.invocation} a${l.attempt} ${l.decision}`),
      denials: denied.length,
      denials_unrecorded: unrecorded,
      local_denials: logs.filter((l) => l.decision.includes("(local)")).length,
      intents: runs.length,
      duplicate_effects: duplicates.length,
      duplicate_examples: duplicates.slice(0, 5).map(([tag, n]) => `${tag}×${n}`),
      duplicate_trails: Object.fromEntries(
        duplicates.slice(0, 5).map(([tag]) => {
          const run = runs.find((r) => r.intent.tag === tag);
          const key = run ? identify(run.intent.tool, run.intent.arguments, "", null).idempotencyKey : "?";
          return [
            tag,
            logs
              .filter((l) => l.invocation?.includes(key))
              .map((l) => `${l.decision} ${l.upstream ?? ""} a${l.attempt} ${l.invocation?.slice(-12)}`),
          ];
        }),
      ),
      ends: count(runs.map((r) => r.end)),
      decisions: count(logs.map((l) => l.decision)),
    };
  } finally {
    await client.end();
  }
}
