import type { InvocationSummary, InvocationView } from "@/lib/invocations/read";
import { CliError, EXIT_UNREACHABLE } from "../errors";
import type { ApiAnswer } from "@/server/api-client";
import { describeAnswer, type SettleClient } from "../http/settle-client";
import {
  addTallies,
  emptyTally,
  sendLines,
  toLine,
  type Line,
  type LineResult,
  type SendOptions,
  type Tally,
} from "../http/send-records";
import type { Plan } from "./plan";
import type { FollowUp } from "./recorder";

// Plays a plan against Settle: sends it, lets the runtime act on Settle's
// answers (probe, retry when allowed, wait until not_before), then reads
// everything back and runs the checks.

export type CheckResult = { name: string; problems: string[] };
export type PlayReport = {
  sent: Tally;
  followUpRounds: number;
  followUpRecords: number;
  checks: CheckResult[];
  statuses: Map<string, number>;
  invocationsSeen: number;
};

const MAX_FOLLOW_UP_ROUNDS = 3;
const READ_CONCURRENCY = 8;

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export async function readInvocations(client: SettleClient, ids: string[]): Promise<Map<string, InvocationView>> {
  const views = await mapLimited([...new Set(ids)], READ_CONCURRENCY, async (id) => {
    const answer = await client.api.get("/api/v1/invocations/{invocation_id}", { params: { invocation_id: id } });
    if (answer.status === 404) return null;
    if (!answer.ok) throw new CliError(`reading invocation ${id} failed: ${describeAnswer(answer)}`, EXIT_UNREACHABLE);
    return answer.body;
  });
  return new Map(views.filter((v): v is InvocationView => v !== null).map((v) => [v.invocation_id, v]));
}

/** Every invocation of this run: its task ids carry the run tag. */
async function listRun(client: SettleClient, runTag: string): Promise<InvocationSummary[]> {
  const items: InvocationSummary[] = [];
  let cursor: string | null = null;
  do {
    const answer: ApiAnswer<"/api/v1/invocations", "GET"> = await client.api.get("/api/v1/invocations", {
      query: { q: `-${runTag}-`, limit: 200, cursor: cursor ?? undefined },
    });
    if (!answer.ok) throw new CliError(`listing invocations failed: ${describeAnswer(answer)}`, EXIT_UNREACHABLE);
    items.push(...answer.body.items);
    cursor = answer.body.next_cursor;
  } while (cursor);
  return items;
}

async function send(client: SettleClient, lines: Line[], options: SendOptions): Promise<Tally> {
  const report = await sendLines(client, lines, options);
  if (report.stopped) throw report.stopped;
  return report.tally;
}

function sentChecks(plan: Plan, results: Map<number, LineResult>): CheckResult[] {
  const checks: CheckResult[] = [];
  const notDuplicate = [...plan.resent].filter((n) => results.get(n)?.status !== "duplicate");
  checks.push({
    name: `${plan.resent.size === 1 ? "1 record" : `${plan.resent.size} records`} sent twice on purpose → answered "duplicate", nothing stored twice`,
    problems: notDuplicate.slice(0, 5).map((n) => `line ${n} was answered ${results.get(n)?.status ?? "nothing"}`),
  });
  if (plan.malformedLine !== null) {
    const result = results.get(plan.malformedLine);
    checks.push({
      name: "a record without task_id → rejected (MISSING_REQUIRED_FIELD), nothing stored",
      problems:
        result?.status === "rejected" && result.code === "MISSING_REQUIRED_FIELD"
          ? []
          : [`answered ${result?.status ?? "nothing"} ${result?.code ?? ""}`.trim()],
    });
  }
  return checks;
}

function aggregateCheck(plan: Plan, listed: InvocationSummary[]): CheckResult {
  const byId = new Map(listed.map((i) => [i.invocation_id, i]));
  const problems: string[] = [];
  let matching = 0;
  for (const planned of plan.ctx.invocations) {
    const found = byId.get(planned.invocationId);
    if (!found) problems.push(`${planned.invocationId} (${planned.scenario}) is missing`);
    else if (found.status !== planned.expected.status) {
      problems.push(
        `${planned.invocationId} (${planned.tool.name}, ${planned.scenario}) is ${found.status}, expected ${planned.expected.status}`,
      );
    } else matching += 1;
  }
  const planned = new Set(plan.ctx.invocations.map((p) => p.invocationId));
  for (const extra of listed.filter((i) => !planned.has(i.invocation_id)))
    problems.push(`unexpected invocation ${extra.invocation_id}`);
  return {
    name: `all ${plan.ctx.invocations.length} invocations of the run have the status the runtime expects (${matching} do)`,
    problems: problems.length > 5 ? [...problems.slice(0, 5), `… and ${problems.length - 5} more`] : problems,
  };
}

export async function playPlan(
  client: SettleClient,
  plan: Plan,
  options: Pick<SendOptions, "batchSize" | "onProgress">,
): Promise<PlayReport> {
  const results = new Map<number, LineResult>();
  let sent = emptyTally();
  const sendOptions: SendOptions = {
    batchSize: options.batchSize,
    onResult: (r) => results.set(r.line.lineNo, r),
    // Each send counts from zero; progress shows the whole run.
    onProgress: (t) => options.onProgress?.(addTallies(sent, t)),
  };
  sent = await send(client, plan.lines, sendOptions);

  let pending: Array<{ id: string; followUp: FollowUp }> = plan.ctx.invocations.flatMap((p) =>
    p.followUp ? [{ id: p.invocationId, followUp: p.followUp }] : [],
  );
  let rounds = 0;
  let followUpRecords = 0;
  let lineNo = plan.lines.length;
  while (pending.length > 0 && rounds < MAX_FOLLOW_UP_ROUNDS) {
    rounds += 1;
    const views = await readInvocations(
      client,
      pending.map((p) => p.id),
    );
    const next: typeof pending = [];
    const records = pending.flatMap(({ id, followUp }) => {
      const view = views.get(id);
      if (!view) return [];
      const step = followUp(view);
      if (step.then) next.push({ id, followUp: step.then });
      return step.records;
    });
    followUpRecords += records.length;
    if (records.length > 0)
      sent = addTallies(
        sent,
        await send(
          client,
          records.map((r) => toLine(++lineNo, JSON.stringify(r))),
          sendOptions,
        ),
      );
    pending = next;
  }

  const views = await readInvocations(
    client,
    plan.ctx.checks.flatMap((c) => c.invocationIds),
  );
  const listed = await listRun(client, plan.runTag);
  const statuses = new Map<string, number>();
  for (const item of listed) statuses.set(item.status, (statuses.get(item.status) ?? 0) + 1);
  const checks: CheckResult[] = [
    ...plan.ctx.checks.map((c) => ({ name: c.name, problems: c.verify(views) })),
    ...sentChecks(plan, results),
    aggregateCheck(plan, listed),
  ];
  return { sent, followUpRounds: rounds, followUpRecords, checks, statuses, invocationsSeen: listed.length };
}
