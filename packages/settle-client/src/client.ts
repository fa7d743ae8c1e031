import { createBatcher } from "./batcher.js";
import { awaitDecision, getDecision, type AwaitDecisionOptions } from "./decisions.js";
import { request, type FetchLike, type HttpOptions } from "./http.js";
import type {
  Decision,
  GuardAnswer,
  GuardInput,
  InvocationDetail,
  RecordResult,
  ReportResult,
  SettleRecord,
  ToolCatalog,
} from "./types.js";
import { wrapTool, type ToolCall, type ToolRun, type WrapToolOptions } from "./wrap-tool.js";
import { createVerifiers, type Verifiers } from "./verifier.js";

export type ClientOptions = {
  /** Settle's base URL, e.g. http://localhost:3000 */
  url: string;
  /** A runtime ingest key (stl_rk_…). */
  key: string;
  /** Default: the global fetch. Inject one to route requests elsewhere (tests, proxies). */
  fetch?: FetchLike;
  /** Records per request, at most 500 (Settle's limit). Default 100. */
  batchSize?: number;
  /** How long a reported record waits for others to share its request. Default 10 ms. */
  batchDelayMs?: number;
  /** Resends of one request after a failure Settle says is worth retrying. Default 5. */
  maxRetries?: number;
  /** Per request, not counting a long poll's hold. Default 15 s. */
  timeoutMs?: number;
  /** Longest hold asked of the decision long poll. Default 30 s. */
  pollWaitS?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
};

export type SettleClient = {
  /** Queues records for Settle (batched); resolves with each record's result once its request is answered. */
  report: {
    (record: SettleRecord): Promise<ReportResult>;
    (records: SettleRecord[]): Promise<ReportResult[]>;
  };
  /** Sends every queued record now. */
  flush: () => Promise<void>;
  /** Asks before a write; also records the intent. */
  guard: (input: GuardInput) => Promise<GuardAnswer>;
  getDecision: (invocationId: string) => Promise<Decision>;
  /** The invocation with its latest attempts and their envelopes as stored (docs/outcome-model.md §8). */
  getInvocation: (invocationId: string) => Promise<InvocationDetail>;
  /** The runtime's tool catalog: the effect class Settle's admins gave each tool. */
  getToolCatalog: () => Promise<ToolCatalog>;
  /** Waits (long-polling) until the decision is no longer `wait`, or `until` holds, or `timeout` ms pass. */
  awaitDecision: (invocationId: string, options: AwaitDecisionOptions) => Promise<Decision>;
  wrapTool: <A, R>(
    fn: (args: A, call: ToolCall) => Promise<R>,
    options: WrapToolOptions<A, R>,
  ) => (args: A) => Promise<ToolRun<R>>;
} & Verifiers;

const MAX_BATCH = 500;
// Settle refuses bodies over 1 MiB; leave room for the wrapper and rounding.
const MAX_BATCH_BYTES = 1_000_000;

export function createSettleClient(options: ClientOptions): SettleClient {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const http: HttpOptions = {
    url: options.url,
    key: options.key,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    maxRetries: options.maxRetries ?? 5,
    timeoutMs: options.timeoutMs ?? 15_000,
    sleep,
    maxRetryWaitMs: 30_000,
  };
  const decisionOptions = { pollWaitS: options.pollWaitS ?? 30, minPollMs: 500, now, sleep };

  const batcher = createBatcher({
    batchSize: Math.min(Math.max(options.batchSize ?? 100, 1), MAX_BATCH),
    maxBytes: MAX_BATCH_BYTES,
    delayMs: options.batchDelayMs ?? 10,
    send: async (records) => {
      const answer = await request(http, { method: "POST", path: "/api/v1/envelopes", body: { records } });
      const body = answer.body as { results?: RecordResult[] };
      return { results: body.results ?? [], resent: answer.resent };
    },
  });

  function report(record: SettleRecord): Promise<ReportResult>;
  function report(records: SettleRecord[]): Promise<ReportResult[]>;
  function report(input: SettleRecord | SettleRecord[]): Promise<ReportResult | ReportResult[]> {
    if (Array.isArray(input)) return batcher.add(input);
    return batcher.add([input]).then(([result]) => result as ReportResult);
  }

  const client: SettleClient = {
    ...createVerifiers(http),
    report,
    flush: batcher.flush,
    guard: async (input) =>
      (await request(http, { method: "POST", path: "/api/v1/guard", body: input })).body as GuardAnswer,
    getDecision: (id) => getDecision(http, id),
    getInvocation: async (id) =>
      (await request(http, { method: "GET", path: `/api/v1/invocations/${encodeURIComponent(id)}` }))
        .body as InvocationDetail,
    getToolCatalog: async () =>
      (await request(http, { method: "GET", path: "/api/v1/tool-catalog" })).body as ToolCatalog,
    awaitDecision: (id, wanted) => awaitDecision(http, decisionOptions, id, wanted),
    wrapTool: (fn, toolOptions) =>
      wrapTool(
        { report, guard: client.guard, getDecision: client.getDecision, awaitDecision: client.awaitDecision, now },
        fn,
        toolOptions,
      ),
  };
  return client;
}
