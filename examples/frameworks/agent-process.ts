import { frameworks, type Framework } from "./agents";
import { httpRefunds } from "./refunds";

// The agent's process in `npm run example:frameworks`: one framework's agent asks for one refund, through Settle.
// The demo kills this process while the provider holds the refund it already applied.

// The example's own process reads its settings; Settle's code never does.
// eslint-disable-next-line no-restricted-properties
const env = process.env;
const [framework, taskId, payment] = process.argv.slice(2) as [Framework, string, string];

await frameworks[framework](httpRefunds(env.PROVIDER_URL!))(
  [{ tool: "create_refund", args: { payment, amount: 25 } }],
  {
    settle: { url: env.SETTLE_URL!, key: env.SETTLE_KEY! },
    taskId,
    effects: { create_refund: "money" },
    timeoutMs: Number(env.BUDGET_MS),
  },
);
