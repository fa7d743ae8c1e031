import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { expect, test } from "@playwright/test";
import { readState, settleCli } from "./server";
import { signIn } from "./sign-in";

// The MCP gateway in front of the SDK shop, against the console server: a
// charge whose server dies mid-call is recorded by the gateway as unknown;
// the queue shows it, its page shows the call's arguments (the card token
// redacted) and what the gateway decided; an operator settles it as not
// committed, and the next identical call goes through, once.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");
const runtime = `mcp-gateway-${run}`;
const password = "mcp gateway e2e password";
const operator = `mcp-op-${run}@example.com`;
const root = process.cwd();
const dir = mkdtempSync(path.join(tmpdir(), "settle-mcp-e2e-"));
const ledger = path.join(dir, "ledger.jsonl");
const faults = path.join(dir, "faults.jsonl");
const charge = {
  name: "charge_card",
  arguments: { order_id: `ord-e2e-${run}`, amount_cents: 2500, card_token: "tok_live_4242424242424242" },
};

let client: Client;
const charges = () =>
  existsSync(ledger)
    ? readFileSync(ledger, "utf8")
        .split("\n")
        .filter((l) => l.includes(`ord-e2e-${run}`)).length
    : 0;

test.beforeAll(async () => {
  settleCli(state.databaseUrl, ["users", "create", "--email", operator, "--role", "operator", "--password", password]);
  const key = settleCli(state.databaseUrl, ["keys", "create", runtime]);
  const config = path.join(dir, "gateway.json");
  writeFileSync(
    config,
    JSON.stringify({
      tools: [{ match: "charge_card", effect: "money" }],
      spool_dir: path.join(dir, "spool"),
      console_url: base,
    }),
  );
  writeFileSync(faults, JSON.stringify({ tool: "charge_card", fault: "crash_before_effect" }) + "\n");
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        "packages/settle-mcp-gateway/bin/settle-mcp.mjs",
        "--config",
        config,
        "--",
        process.execPath,
        "--import",
        "tsx",
        "packages/settle-mcp-gateway/test/shop/shop-server.ts",
        "--stdio",
      ],
      env: { ...env, SETTLE_URL: base, SETTLE_KEY: key, SHOP_LEDGER: ledger, SHOP_FAULTS: faults },
      cwd: root,
      stderr: "ignore",
    }),
  );
});

test.afterAll(async () => {
  await client?.close();
});

test("a gateway-recorded unknown call is in the queue with its arguments (redacted) and the gateway's decision; settled as not committed, the next identical call goes through", async ({
  page,
}) => {
  const first = (await client.callTool(charge)) as any;
  expect(first.isError).toBe(true);
  expect(first.structuredContent).toMatchObject({ code: "OUTCOME_UNKNOWN", commit_state: "unknown" });
  const id = first.structuredContent.invocation_id as string;
  expect(first.structuredContent.console_url).toBe(`${base}/invocations/${encodeURIComponent(id)}`);
  // The duplicate is stopped while the outcome is unknown.
  expect(((await client.callTool(charge)) as any).structuredContent.code).toBe("OUTCOME_UNKNOWN");
  expect(charges()).toBe(0);

  await signIn(page, base, operator, password, `/?runtime=${runtime}`);
  await page.goto(`${base}/?runtime=${runtime}`);
  const row = page.getByTestId("invocation-row").filter({ hasText: "charge_card" });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("Outcome unknown");
  await expect(row).toContainText(/money/i);
  await row.getByRole("link", { name: "charge_card" }).click();

  await expect(page.getByRole("heading", { level: 1 })).toContainText("charge_card");
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Outcome unknown");
  const envelopes = page.getByText("Envelope as received");
  for (const summary of await envelopes.all()) await summary.click();
  const body = page.locator("main");
  // The intent the gateway wrote before dispatch: the call's arguments, the token redacted, and its decision.
  await expect(body).toContainText(`"order_id": "ord-e2e-${run}"`);
  await expect(body).toContainText('"card_token": "[redacted]"');
  await expect(body).not.toContainText("tok_live_4242424242424242");
  await expect(body).toContainText('"decision": "forwarded"');
  await expect(body).toContainText("the server exited after the call was sent");

  const actions = page.getByRole("region", { name: "What you can do" });
  await expect(actions.getByRole("button", { name: /retry/i })).toHaveCount(0);
  await actions.getByRole("button", { name: /^Mark reconciled/ }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel(/^Not committed/).check();
  await dialog
    .getByLabel("Evidence note (required)")
    .fill("The shop's ledger has no charge for this order: the server died before charging.");
  await dialog.getByRole("button", { name: "Settle as NOT committed" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Reconciled");

  const paid = (await client.callTool(charge)) as any;
  expect(paid.isError).toBeFalsy();
  expect(paid.content[0].text).toContain("charged 2500");
  expect(charges()).toBe(1);
  await page.reload();
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Succeeded");
});
