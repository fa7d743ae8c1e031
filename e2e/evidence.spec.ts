import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { OUT_DIR, readState } from "./server";
import { signIn } from "./sign-in";

// An auditor's copy of a call (issue 41 §2): an operator downloads the evidence pack from the invocation page,
// and `settle evidence verify` checks it offline (no database, no network) against the key the server
// publishes; the same file with one byte changed is refused.

const state = readState().console;
const base = state.baseURL;
const dir = path.join(OUT_DIR, "evidence");

/** The CLI without a database: what an auditor runs on their own machine. */
function verifyOffline(file: string, keys: string) {
  return spawnSync(process.execPath, ["bin/settle.mjs", "evidence", "verify", file, "--key", keys], {
    env: { ...process.env, DATABASE_URL: "", SETTLE_DATA_DIR: "" },
    encoding: "utf8",
  });
}

test("the invocation page's evidence pack downloads and verifies offline", async ({ page, request }) => {
  mkdirSync(dir, { recursive: true });
  const id = `inv-${randomBytes(4).toString("hex")}`;
  const sent = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${state.key}` },
    data: {
      records: [
        {
          event_id: `${id}-i`,
          task_id: `task-${id}`,
          invocation_id: id,
          tool: "create_refund",
          effect_class: "money",
          phase: "intent",
          arguments: { amount: 40, order: "ord-7741" },
        },
        {
          event_id: `${id}-o`,
          task_id: `task-${id}`,
          invocation_id: id,
          tool: "create_refund",
          effect_class: "money",
          phase: "outcome",
          envelope: { outcome: "ok", effect_applied: "yes" },
        },
      ],
    },
  });
  expect(sent.ok()).toBe(true);
  const keys = path.join(dir, "settle-keys.json");
  const published = await request.get(`${base}/.well-known/settle-evidence-key`);
  expect(published.status()).toBe(200);
  writeFileSync(keys, await published.text());

  await signIn(page, base, state.adminEmail, state.adminPassword, `/invocations/${id}?runtime=billing-agent`);
  const button = page.getByTestId("download-evidence");
  await expect(button).toHaveText("Download evidence pack");
  await button.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(dir, "invocation-evidence-button.png") });
  const [download] = await Promise.all([page.waitForEvent("download"), button.click()]);
  expect(download.suggestedFilename()).toMatch(/\.json$/);
  const file = path.join(dir, download.suggestedFilename());
  await download.saveAs(file);

  const pack = JSON.parse(readFileSync(file, "utf8"));
  expect(pack.format).toBe("settle.evidence-pack/1");
  expect(pack.pack.invocation).toMatchObject({ invocation_id: id, runtime: "billing-agent" });
  const verified = verifyOffline(file, keys);
  expect(verified.stderr).toBe("");
  expect(verified.status).toBe(0);
  expect(verified.stdout).toMatch(/pack verified, signed by sek_[0-9a-f]{16}/);

  // One byte of the amount changed: refused, with the reason.
  const text = readFileSync(file, "utf8");
  const changed = path.join(dir, "changed.json");
  writeFileSync(changed, text.replace('"amount":40', '"amount":41'));
  expect(readFileSync(changed, "utf8")).not.toBe(text);
  const refused = verifyOffline(changed, keys);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/signature does not match/);
});
