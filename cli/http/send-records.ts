import type { z } from "zod";
import { ingestResultSchema } from "@/lib/ingest/result";
import { MAX_BODY_BYTES, MAX_RECORDS } from "@/lib/ingest/read-body";
import { CliError, EXIT_FAILED, EXIT_UNREACHABLE } from "../errors";
import { describeAnswer, type SettleClient } from "./settle-client";

// Sends JSON lines to POST /api/v1/envelopes in requests that stay inside
// docs/outcome-model.md §2's limits (≤ 500 records and ≤ 1 MiB each), as NDJSON so that Settle
// itself judges every line, and maps its per-record answers back to lines.

export { MAX_BODY_BYTES, MAX_RECORDS };

export type Line = { lineNo: number; text: string; bytes: number };
export type RecordStatus = "accepted" | "duplicate" | "rejected";
export type LineResult = {
  line: Line;
  status: RecordStatus;
  invocationId: string | null;
  code: string | null;
  message: string | null;
};

export type Tally = {
  records: number;
  requests: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  bytes: number;
};

export const emptyTally = (): Tally => ({ records: 0, requests: 0, accepted: 0, duplicates: 0, rejected: 0, bytes: 0 });

export function addTallies(a: Tally, b: Tally): Tally {
  return {
    records: a.records + b.records,
    requests: a.requests + b.requests,
    accepted: a.accepted + b.accepted,
    duplicates: a.duplicates + b.duplicates,
    rejected: a.rejected + b.rejected,
    bytes: a.bytes + b.bytes,
  };
}

export type SendOptions = {
  batchSize: number;
  onResult?: (result: LineResult) => void;
  onProgress?: (tally: Tally) => void;
};

export type SendReport = { tally: Tally; stopped: CliError | null; lastLine: number };

export function toLine(lineNo: number, text: string): Line {
  return { lineNo, text, bytes: Buffer.byteLength(text) };
}

type IngestAnswer = z.infer<typeof ingestResultSchema>;

async function postBatch(client: SettleClient, batch: Line[]): Promise<IngestAnswer> {
  const answer = await client.api.post("/api/v1/envelopes", {
    content: { type: "application/x-ndjson", text: batch.map((l) => l.text).join("\n") },
  });
  // Typed by the route's declaration, and checked too: --url may name something that is not Settle.
  const parsed = answer.ok && answer.status === 207 ? ingestResultSchema.safeParse(answer.body) : null;
  if (parsed?.success && parsed.data.results.length === batch.length) return parsed.data;
  if (answer.status === 404 || answer.status === 405) {
    throw new CliError(
      `${client.url.origin} has no Settle ingest API at ${new URL("api/v1/envelopes", client.url).pathname} (${describeAnswer(answer)}); check --url`,
      EXIT_UNREACHABLE,
    );
  }
  const kind = answer.status >= 500 ? EXIT_UNREACHABLE : EXIT_FAILED;
  throw new CliError(`Settle refused a request of ${batch.length} records: ${describeAnswer(answer)}`, kind);
}

export async function sendLines(
  client: SettleClient,
  lines: AsyncIterable<Line> | Iterable<Line>,
  options: SendOptions,
): Promise<SendReport> {
  const tally = emptyTally();
  let batch: Line[] = [];
  let batchBytes = 0;
  let lastLine = 0;

  const record = (result: LineResult) => {
    tally.records += 1;
    tally.bytes += result.line.bytes + 1;
    if (result.status === "accepted") tally.accepted += 1;
    else if (result.status === "duplicate") tally.duplicates += 1;
    else tally.rejected += 1;
    lastLine = Math.max(lastLine, result.line.lineNo);
    options.onResult?.(result);
  };

  const flush = async () => {
    if (batch.length === 0) return;
    const sent = batch;
    batch = [];
    batchBytes = 0;
    const answer = await postBatch(client, sent);
    tally.requests += 1;
    answer.results.forEach((r, i) => {
      record({
        line: sent[i]!,
        status: r.status,
        invocationId: r.invocation_id ?? null,
        code: r.error?.code ?? null,
        message: r.error?.agent_message ?? null,
      });
    });
    options.onProgress?.(tally);
  };

  try {
    for await (const line of lines) {
      if (line.bytes > MAX_BODY_BYTES) {
        record({
          line,
          status: "rejected",
          invocationId: null,
          code: "LINE_TOO_LARGE",
          message: `Not sent: the line is ${(line.bytes / 1024 / 1024).toFixed(2)} MiB and one request may carry at most 1 MiB.`,
        });
        continue;
      }
      // One newline joins each line to the previous one in the body.
      const added = line.bytes + (batch.length > 0 ? 1 : 0);
      if (batch.length >= options.batchSize || batchBytes + added > MAX_BODY_BYTES) await flush();
      batchBytes += line.bytes + (batch.length > 0 ? 1 : 0);
      batch.push(line);
    }
    await flush();
    return { tally, stopped: null, lastLine };
  } catch (error) {
    if (error instanceof CliError) return { tally, stopped: error, lastLine };
    throw error;
  }
}
