import { stringifyExactJson } from "./exact-json.js";
import type { RecordResult, ReportResult, SettleRecord } from "./types.js";

// Records reported close together travel in one request: up to `batchSize`
// records and `maxBytes` of JSON, sent one request at a time, each record's
// promise settled with its own result from Settle's 207.

export type SendBatch = (records: SettleRecord[]) => Promise<{ results: RecordResult[]; resent: boolean }>;

export type BatcherOptions = { send: SendBatch; batchSize: number; maxBytes: number; delayMs: number };

export type Batcher = {
  add: (records: SettleRecord[]) => Promise<ReportResult[]>;
  /** Sends everything queued so far; resolves once it has been answered. */
  flush: () => Promise<void>;
};

type Entry = { record: SettleRecord; bytes: number; resolve: (r: ReportResult) => void; reject: (e: unknown) => void };

const encoder = new TextEncoder();

export function createBatcher(options: BatcherOptions): Batcher {
  let queue: Entry[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  let chain: Promise<void> = Promise.resolve();

  function takeChunks(): Entry[][] {
    const chunks: Entry[][] = [];
    let chunk: Entry[] = [];
    let bytes = 0;
    for (const entry of queue) {
      if (chunk.length > 0 && (chunk.length >= options.batchSize || bytes + entry.bytes > options.maxBytes)) {
        chunks.push(chunk);
        chunk = [];
        bytes = 0;
      }
      chunk.push(entry);
      bytes += entry.bytes + 1;
    }
    if (chunk.length > 0) chunks.push(chunk);
    queue = [];
    return chunks;
  }

  async function sendChunk(chunk: Entry[]): Promise<void> {
    try {
      const { results, resent } = await options.send(chunk.map((e) => e.record));
      chunk.forEach((entry, index) => {
        const result = results.find((r) => r.index === index);
        if (result) entry.resolve({ ...result, resent });
        else entry.reject(new Error(`Settle's answer has no result for record ${index} of the batch`));
      });
    } catch (error) {
      for (const entry of chunk) entry.reject(error);
    }
  }

  function flush(): Promise<void> {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    for (const chunk of takeChunks()) chain = chain.then(() => sendChunk(chunk));
    return chain;
  }

  function add(records: SettleRecord[]): Promise<ReportResult[]> {
    const promises = records.map(
      (record) =>
        new Promise<ReportResult>((resolve, reject) => {
          queue.push({ record, bytes: encoder.encode(stringifyExactJson(record)).length, resolve, reject });
        }),
    );
    if (queue.length >= options.batchSize) void flush();
    else if (timer === null) timer = setTimeout(() => void flush(), options.delayMs);
    return Promise.all(promises);
  }

  return { add, flush };
}
