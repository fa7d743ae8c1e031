#!/usr/bin/env node
// `node scripts/bench-smoke.mjs <bench>`: runs `npm run bench:<bench>` once at
// a tiny size against this checkout's build, so no benchmark can rot unseen
// (npm test runs each). It checks that the bench completes and writes its
// report, not its figures: those come from full runs on a quiet machine.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const TINY = {
  ingest: ["--tiny", "--no-build"],
  metrics: ["--mode", "in-process", "--runs", "2", "--invocations", "3000"],
  console: [
    "--no-build",
    "--dist-dir",
    ".next",
    "--duration",
    "1",
    "--warmup",
    "0",
    "--connections",
    "1",
    "--invocations",
    "3000",
  ],
  otlp: ["--no-build", "--batches", "2", "--batch-size", "16", "--connections", "1", "--rounds", "1"],
  gateway: ["--build=skip", "--intents=40", "--latency=10", "--concurrency=2"],
  verify: ["--tiny", "--no-build"],
  retention: ["--tiny"],
};

const bench = process.argv[2];
if (!(bench in TINY)) {
  console.error(`usage: node scripts/bench-smoke.mjs <${Object.keys(TINY).join("|")}>`);
  process.exit(2);
}
const results = mkdtempSync(path.join(tmpdir(), `settle-bench-${bench}-`));
try {
  const run = spawnSync("npm", ["run", "-s", `bench:${bench}`, "--", ...TINY[bench]], {
    stdio: "inherit",
    env: { ...process.env, SETTLE_BENCH_RESULTS: results, SETTLE_LOG_LEVEL: "warn" },
  });
  const reports = readdirSync(results).filter((f) => f.startsWith(`${bench}-`) && f.endsWith(".json"));
  if (run.status !== 0) {
    console.error(`bench:${bench} (tiny) exited ${run.status}`);
    process.exit(1);
  }
  if (reports.length !== 1) {
    console.error(`bench:${bench} (tiny) wrote ${reports.length} reports, expected 1`);
    process.exit(1);
  }
  JSON.parse(readFileSync(path.join(results, reports[0]), "utf8"));
  console.log(`bench:${bench} (tiny) completed and wrote ${reports[0]}`);
} finally {
  rmSync(results, { recursive: true, force: true });
}
