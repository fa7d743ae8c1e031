import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { machine, SHARED_CORES_NOTE } from "../report";
import {
  createBenchDatabase,
  ensureBuild,
  freePort,
  gitHead,
  prepareDatabase,
  releaseOnExit,
  ROOT,
  startServer,
  type BenchDatabase,
  type BenchServer,
  resultsDir,
} from "../setup";
import { makeBatches, type Batch } from "./spans";

// `npm run bench:otlp [-- --no-build --batches 24 --connections 4 --rounds 3]`:
// tool-call spans per second through POST /v1/traces (batches of 512 spans,
// protobuf and JSON, as the OpenTelemetry SDK serializes them) against the
// same calls as records through POST /api/v1/envelopes (an intent and an
// outcome per span, at most 500 records a request), in the same run, on the
// same server and database. Target: OTLP ≥ 80 % of native. Phases alternate
// over rounds so drift on a shared machine hits each alike; the median round
// counts. Writes bench/results/otlp-<date>.json. --dist-dir picks the build.

const { values: args } = parseArgs({
  options: {
    "no-build": { type: "boolean", default: false },
    batches: { type: "string", default: "24" },
    "batch-size": { type: "string", default: "512" },
    connections: { type: "string", default: "4" },
    rounds: { type: "string", default: "3" },
    "dist-dir": { type: "string", default: ".next" },
  },
});
const num = (name: keyof typeof args) => {
  const value = Number(args[name]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive whole number`);
  return value;
};

const TARGET_SHARE = 0.8;
const MAX_RECORDS = 500;
type Mode = "envelopes" | "otlp-protobuf" | "otlp-json";

let server: BenchServer | null = null;
let database: BenchDatabase | null = null;
const cleanup = releaseOnExit(() => ({ server, database }));

function requestsOf(mode: Mode, batch: Batch, base: string, key: string): Array<() => Promise<void>> {
  const auth = { authorization: `Bearer ${key}` };
  const send = async (
    url: string,
    body: Uint8Array | string,
    type: string,
    check: (res: Response, text: string) => void,
  ) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { ...auth, "content-type": type },
      body: typeof body === "string" ? body : Buffer.from(body),
    });
    const text = await res.text();
    check(res, text);
  };
  if (mode === "envelopes") {
    const parts: object[][] = [];
    for (let i = 0; i < batch.records.length; i += MAX_RECORDS) parts.push(batch.records.slice(i, i + MAX_RECORDS));
    return parts.map(
      (records) => () =>
        send(`${base}/api/v1/envelopes`, JSON.stringify({ records }), "application/json", (res, text) => {
          const body = JSON.parse(text) as { accepted?: number };
          if (res.status !== 207 || body.accepted !== records.length)
            throw new Error(`envelopes: ${res.status} ${text.slice(0, 300)}`);
        }),
    );
  }
  const protobuf = mode === "otlp-protobuf";
  return [
    () =>
      send(
        `${base}/v1/traces`,
        protobuf ? batch.protobuf : batch.json,
        protobuf ? "application/x-protobuf" : "application/json",
        (res, text) => {
          // Every span is a tool call and new: a full success answers without partialSuccess.
          if (res.status !== 200 || (!protobuf && text !== "{}") || (protobuf && text.length !== 0))
            throw new Error(`${mode}: ${res.status} ${text.slice(0, 300)}`);
        },
      ),
  ];
}

/** Sends every batch's requests over `connections` concurrent senders; spans per second. */
async function phase(
  mode: Mode,
  batches: Batch[],
  spansPerBatch: number,
  base: string,
  key: string,
  connections: number,
): Promise<{ spans_per_s: number; seconds: number; requests: number }> {
  const queue = batches.flatMap((b) => requestsOf(mode, b, base, key));
  const requests = queue.length;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await next();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    spans_per_s: Math.round((batches.length * spansPerBatch) / seconds),
    seconds: Math.round(seconds * 100) / 100,
    requests,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const plan = {
    batches: num("batches"),
    batchSize: num("batch-size"),
    connections: num("connections"),
    rounds: num("rounds"),
  };
  log(`Settle OTLP ingest benchmark — ${SHARED_CORES_NOTE}`);
  const distDir = args["dist-dir"]!;
  log(`• build (${distDir}): ${ensureBuild(args["no-build"] ? "skip" : "auto", distDir)}`);
  database = await createBenchDatabase();
  const { key } = await prepareDatabase(database.url);
  server = await startServer(database.url, await freePort(), {
    SETTLE_NEXT_DIST_DIR: distDir,
    SETTLE_BACKGROUND_JOBS: "off",
  });
  log(`• next start on ${server.url} (pid ${server.pid}); database ${database.name}`);

  const run = randomBytes(3).toString("hex");
  const modes: Mode[] = ["envelopes", "otlp-protobuf", "otlp-json"];
  log(
    `• making ${plan.rounds * modes.length + 1} × ${plan.batches} batches of ${plan.batchSize} spans with the OpenTelemetry SDK …`,
  );
  for (const mode of modes)
    await phase(
      mode,
      makeBatches(2, plan.batchSize, `${run}-warm-${mode}`),
      plan.batchSize,
      server.url,
      key,
      plan.connections,
    );

  const results: Record<Mode, Array<{ spans_per_s: number; seconds: number; requests: number }>> = {
    envelopes: [],
    "otlp-protobuf": [],
    "otlp-json": [],
  };
  for (let round = 0; round < plan.rounds; round += 1) {
    for (const mode of modes) {
      const batches = makeBatches(plan.batches, plan.batchSize, `${run}-${round}-${mode}`);
      const r = await phase(mode, batches, plan.batchSize, server.url, key, plan.connections);
      results[mode].push(r);
      log(
        `  round ${round + 1} ${mode.padEnd(14)} ${String(r.spans_per_s).padStart(7)} spans/s  (${r.requests} requests, ${r.seconds} s)`,
      );
    }
  }
  const native = median(results.envelopes.map((r) => r.spans_per_s));
  const summary = modes.map((mode) => {
    const spansPerS = median(results[mode].map((r) => r.spans_per_s));
    return {
      mode,
      spans_per_s: spansPerS,
      records_per_s: spansPerS * 2,
      share_of_native: Math.round((spansPerS / native) * 100) / 100,
    };
  });
  log("");
  log("| path | spans/s (median) | records/s | share of native |");
  log("|---|---:|---:|---:|");
  for (const s of summary)
    log(
      `| ${s.mode === "envelopes" ? "POST /api/v1/envelopes (native)" : `POST /v1/traces, ${s.mode.slice(5)}`} | ${s.spans_per_s} | ${s.records_per_s} | ${Math.round(s.share_of_native * 100)} % |`,
    );
  const pass = summary.filter((s) => s.mode !== "envelopes").every((s) => s.share_of_native >= TARGET_SHARE);
  log(`\nTarget: OTLP ≥ ${TARGET_SHARE * 100} % of native — ${pass ? "met" : "NOT met"}`);

  const date = new Date().toISOString();
  const dir = resultsDir();
  const file = path.join(dir, `otlp-${date.replace(/[:]/g, "-").replace(/\.\d+Z$/, "Z")}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ date, commit: gitHead(), machine: machine(), plan, rounds: results, summary, target_share: TARGET_SHARE, pass }, null, 2)}\n`,
  );
  log(`• wrote ${path.relative(ROOT, file)}`);
}

main()
  .then(() => cleanup())
  .catch(async (error: unknown) => {
    console.error(error);
    await cleanup();
    process.exitCode = 1;
  });
