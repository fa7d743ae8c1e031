import { parseArgs } from "node:util";
import { createSettleClient } from "@settle/client";
import { createShop } from "./fake-shop";
import { checkFixture, createAgentRuntime } from "./runtime";

// Plays seed 002's six failures against a running Settle and prints one line
// per fixture. Usage:
//   node --import tsx examples/agent-runtime/main.ts --url http://localhost:3000 --key stl_rk_…

const { values } = parseArgs({ options: { url: { type: "string" }, key: { type: "string" } } });
if (!values.url || !values.key) {
  process.stderr.write("usage: main.ts --url http://localhost:3000 --key stl_rk_…\n");
  process.exit(1);
}

const settle = createSettleClient({ url: values.url, key: values.key });
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
