import { spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createSettleClient, defaultIdempotencyKey } from "@settle/client";
import { frameworks, type Framework } from "./agents";
import { httpRefunds, refundedAt, startProvider } from "./refunds";

// `npm run example:frameworks`: source article 002's first failure — the agent's process is killed mid-call
// after the provider applied the refund — replayed through each framework's adapter against a running Settle.
// The restarted agent asks for the same refund: Settle refuses it while the first call may still complete, then
// (past the call's budget) the agent's probe finds the refund at the provider, Settle settles the call as
// committed, and the model is told it already took effect. Each framework ends with exactly one refund.

// The example's own process reads its settings; Settle's code never does.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const settleUrl = (env.SETTLE_URL ?? "http://localhost:3000").replace(/\/+$/, "");
const BUDGET_MS = 2_000;
const say = (line: string) => process.stdout.write(`${line}\n`);

function runtimeKey(): string {
  if (env.SETTLE_KEY) return env.SETTLE_KEY;
  const made = spawnSync(process.execPath, [path.join(root, "bin/settle.mjs"), "keys", "create", "frameworks-demo"], {
    cwd: root,
    encoding: "utf8",
  });
  if (made.status !== 0) throw new Error(`could not create a runtime key: ${made.stderr.trim()}`);
  return made.stdout.trim();
}

async function replay(framework: Framework, key: string, run: string): Promise<number> {
  const payment = `pay_${framework}_${run}`;
  const taskId = `refund-${framework}-${run}`;
  let agent: ReturnType<typeof spawn> | null = null;
  const killed = new Promise<void>((resolve) => {
    void startProvider(
      () => {
        agent?.kill("SIGKILL");
        resolve();
      },
      new Set([payment]),
    ).then((p) => {
      provider = p;
      agent = spawn(
        process.execPath,
        ["--import", "tsx", path.join(here, "agent-process.ts"), framework, taskId, payment],
        {
          cwd: root,
          env: { ...env, SETTLE_URL: settleUrl, SETTLE_KEY: key, PROVIDER_URL: p.url, BUDGET_MS: String(BUDGET_MS) },
          stdio: "inherit",
        },
      );
    });
  });
  let provider: Awaited<ReturnType<typeof startProvider>> | null = null;
  await killed;
  const p = provider!;
  say(`${framework}: the agent's process was killed after the provider applied ${payment}'s refund`);
  const restarted = frameworks[framework](httpRefunds(p.url));
  const options = {
    settle: createSettleClient({ url: settleUrl, key }),
    taskId,
    effects: { create_refund: "money" as const },
    timeoutMs: BUDGET_MS,
    probe: async ({ args }: { args: unknown }) => ({
      found: await refundedAt(p.url, (args as { payment: string }).payment),
    }),
  };
  const turn = [{ tool: "create_refund" as const, args: { payment, amount: 25 } }];
  const [early] = await restarted(turn, options);
  say(`  restarted, the model asks again → ${early}`);
  await new Promise((r) => setTimeout(r, BUDGET_MS + 500));
  const [later] = await restarted(turn, options);
  say(`  past the call's budget, the agent's probe finds the refund → ${later}`);
  // The adapters' default key: the tool and a digest of its arguments; Settle's invocation is task:key.
  const invocation = `${taskId}:${await defaultIdempotencyKey("create_refund", turn[0]!.args)}`;
  const decision = await options.settle.getDecision(invocation).catch(() => null);
  if (decision)
    say(`  Settle: ${decision.status}, commit state ${decision.commit_state}, decision ${decision.decision}`);
  const count = p.refunds(payment);
  say(`  ${framework}: ${count} refund of ${payment} at the provider`);
  await p.close();
  return count;
}

async function main(): Promise<number> {
  const health = await fetch(`${settleUrl}/api/health`).catch(() => null);
  if (!health?.ok) {
    process.stderr.write(
      `example:frameworks: no Settle at ${settleUrl}: start it with \`npm run dev\` (or set SETTLE_URL)\n`,
    );
    return 2;
  }
  const key = runtimeKey();
  const run = Date.now().toString(36);
  const counts: Record<string, number> = {};
  for (const framework of Object.keys(frameworks) as Framework[]) counts[framework] = await replay(framework, key, run);
  const all = Object.values(counts).every((n) => n === 1);
  say(
    `${all ? "Each framework: exactly one refund." : "A framework refunded more than once!"} ${JSON.stringify(counts)}`,
  );
  return all ? 0 : 1;
}

process.exitCode = await main();
