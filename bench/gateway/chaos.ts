import { appendFileSync } from "node:fs";
import type { Client } from "@modelcontextprotocol/client";

// The agent side of the chaos run: intents (an order, a charge, an email,
// each with arguments no other intent has), each followed through the
// gateway's answers the way a careful MCP client would: a broken stream or
// an unknown outcome is re-issued as a new request (what the 2026-07-28
// revision makes clients do), "retry later" waits for not_before, an
// unreachable server or Settle is tried again after a pause. Faults are put
// in the shop's fault file just before a call: that tool's next call meets them.

export type Tool = "create_order" | "charge_card" | "send_email";
export type Intent = { n: number; tool: Tool; tag: string; arguments: Record<string, unknown> };
export type IntentEnd = "ok" | "already_committed" | "unknown" | "refused" | "gave_up";
export type IntentRun = { intent: Intent; calls: number; clientErrors: number; end: IntentEnd; faults: string[] };

export type Rng = () => number;

/** Mulberry32: the same seed, the same run. */
export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function makeIntent(n: number, rng: Rng, prefix: string): Intent {
  const pick = rng();
  const tag = `${prefix}-${n}`;
  if (pick < 0.5)
    return { n, tool: "create_order", tag, arguments: { customer: tag, items: [{ sku: "SKU-1", qty: 1 + (n % 3) }] } };
  if (pick < 0.75)
    return {
      n,
      tool: "charge_card",
      tag,
      arguments: { order_id: tag, amount_cents: 100 + n, card_token: "tok_bench" },
    };
  return {
    n,
    tool: "send_email",
    tag,
    arguments: { to: [`${tag}@example.com`], subject: "Your order", body: "Thank you." },
  };
}

export type ChaosOptions = {
  faultsFile: string;
  brokenStreamRate: number;
  crashRate: number;
  rng: Rng;
  maxCalls?: number;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function injectFault(intent: Intent, options: ChaosOptions): string | null {
  const roll = options.rng();
  const fault =
    roll < options.crashRate
      ? "crash_after_effect"
      : roll < options.crashRate + options.brokenStreamRate
        ? "break_stream_after_effect"
        : null;
  if (fault) appendFileSync(options.faultsFile, JSON.stringify({ tool: intent.tool, fault }) + "\n");
  return fault;
}

export async function followIntent(client: Client, intent: Intent, options: ChaosOptions): Promise<IntentRun> {
  const run: IntentRun = { intent, calls: 0, clientErrors: 0, end: "gave_up", faults: [] };
  let unknowns = 0;
  while (run.calls < (options.maxCalls ?? 20)) {
    const fault = injectFault(intent, options);
    if (fault) run.faults.push(fault);
    run.calls += 1;
    let result: any;
    try {
      result = await client.callTool({ name: intent.tool, arguments: intent.arguments }, { timeout: 30_000 });
    } catch {
      // The client's own connection failed: re-issue as a new request.
      run.clientErrors += 1;
      await sleep(200);
      continue;
    }
    if (!result.isError) {
      run.end = "ok";
      return run;
    }
    const code = result.structuredContent?.code as string | undefined;
    if (code === "ALREADY_COMMITTED") {
      run.end = "already_committed";
      return run;
    }
    if (code === "OUTCOME_UNKNOWN") {
      // Re-issued as a client must after a broken stream, after a pause (a crashed server is starting again,
      // and the gateway's probe needs it); past three unknowns it is a person's to settle.
      if ((unknowns += 1) >= 3) {
        run.end = "unknown";
        return run;
      }
      await sleep(unknowns === 1 ? 0 : 1500);
      continue;
    }
    if (code === "RETRY_LATER") {
      const notBefore = Date.parse(result.structuredContent?.not_before ?? "");
      await sleep(Number.isNaN(notBefore) ? 500 : Math.max(50, notBefore - Date.now() + 50));
      continue;
    }
    if (code === "SETTLE_UNREACHABLE" || code === "UPSTREAM_UNREACHABLE" || code === "IN_FLIGHT") {
      await sleep(code === "SETTLE_UNREACHABLE" ? 1000 : 250);
      continue;
    }
    run.end = "refused";
    return run;
  }
  return run;
}

/** Runs `intents` through the gateway `concurrency` at a time; `onProgress` after each. */
export async function runChaos(
  clients: Client[],
  intents: Intent[],
  options: ChaosOptions,
  onProgress: (done: number) => void,
): Promise<IntentRun[]> {
  const runs: IntentRun[] = [];
  let next = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (next < intents.length) {
        const intent = intents[next++]!;
        runs.push(await followIntent(client, intent, options));
        onProgress(runs.length);
      }
    }),
  );
  return runs.sort((a, b) => a.intent.n - b.intent.n);
}
