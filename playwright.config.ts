import { networkInterfaces } from "node:os";
import { defineConfig } from "@playwright/test";

// Debian's Chromium, kept off the network: it reaches only this machine (localhost and its
// own interface addresses, where `next dev` also answers: e2e/sign-in-dev.spec.ts).
const ownAddresses = Object.values(networkInterfaces())
  .flatMap((list) => list ?? [])
  .filter((a) => a.family === "IPv4" && !a.internal)
  .map((a) => `, EXCLUDE ${a.address}`)
  .join("");
const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
  `--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost${ownAddresses}`,
];

const out = process.env.SETTLE_E2E_OUT || "test-results";

export default defineConfig({
  testDir: "./e2e",
  globalSetup: "./e2e/global-setup.ts",
  globalTeardown: "./e2e/global-teardown.ts",
  forbidOnly: Boolean(process.env.CI),
  workers: 1,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  reporter: [["list"], ["json", { outputFile: `${out}/playwright.json` }]],
  outputDir: `${out}/playwright`,
  use: {
    browserName: "chromium",
    launchOptions: { executablePath: "/usr/bin/chromium", args: chromiumArgs },
    viewport: { width: 1400, height: 900 },
    trace: "retain-on-failure",
  },
});
