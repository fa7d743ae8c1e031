import { parseArgs } from "node:util";
import { createSettleClient } from "@settle/client";
import { createShop } from "./fake-shop";
import { checkFixture, createAgentRuntime } from "./runtime";
import { describeRun, reportKilledMidCall, verifyAtShop } from "./verifier";

// Plays source article 002's (docs/outcome-model.md) six failures against a running Settle and prints one line
// per fixture. Usage:
//   node --import tsx examples/agent-runtime/main.ts --url http://localhost:3000 --key stl_rk_…
// With --verify [N]: N killed-mid-call cases (default 10) that Settle settles through this runtime's verifier,
// and the share settled without a person. Give create_order a verifier first (Admin → Tool catalog → Verifier).

const { values } = parseArgs({
  options: { url: { type: "string" }, key: { type: "string" }, verify: { type: "string" } },
});
if (!values.url || !values.key) {
  process.stderr.write("usage: main.ts --url http://localhost:3000 --key stl_rk_…\n");
  process.exit(1);
}

const settle = createSettleClient({ url: values.url, key: values.key });
if (values.verify !== undefined) {
  const shop = createShop();
  const cases = await reportKilledMidCall(settle, shop, Date.now().toString(36), Number(values.verify) || 10);
  process.stdout.write(`${cases.length} calls killed mid-call, reported unknown; serving Settle's asks …\n`);
  const run = await verifyAtShop(settle, shop, cases, 120_000);
  process.stdout.write(`${describeRun(run)}\n`);
  if (run.settledWithoutPerson === 0)
    process.stdout.write("Nothing was asked: does create_order have a verifier in Settle's tool catalog?\n");
  process.exit(run.settledWithoutPerson === run.cases ? 0 : 1);
}
const runtime = createAgentRuntime(settle, createShop(), {
  runTag: Date.now().toString(36),
  decisionTimeoutMs: 30_000,
});

let failed = 0;
for (const result of await runtime.playAll()) {
  const problems = await checkFixture(settle, result);
  if (problems.length > 0) failed += 1;
  const runs = result.runs
    .map(
      (r) =>
        `${r.status} after ${r.calls} call${r.calls === 1 ? "" : "s"} (${r.decision?.status ?? "?"} → ${r.decision?.decision ?? "?"})`,
    )
    .join("; ");
  process.stdout.write(
    `${problems.length === 0 ? "PASS" : "FAIL"}  ${result.name.padEnd(40)} ${runs}; ${result.effects} effect(s)\n`,
  );
  for (const problem of problems) process.stdout.write(`      ${problem}\n`);
}
process.exit(failed === 0 ? 0 : 1);
