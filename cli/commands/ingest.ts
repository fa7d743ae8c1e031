import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { publicUrl } from "@/lib/env";
import { integerOption, requiredString, stringOption, type Command } from "../args";
import { CliError, EXIT_FAILED } from "../errors";
import { createSettleClient, parseServerUrl } from "../http/settle-client";
import { MAX_RECORDS, sendLines, toLine, type Line, type LineResult } from "../http/send-records";
import { printLine, realSleep } from "../io";
import { createProgress } from "../progress";
import { formatCount, plural } from "../table";

const SHOWN_REJECTIONS = 20;

async function* readLines(path: string): AsyncGenerator<Line> {
  const reader = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNo = 0;
  for await (const raw of reader) {
    lineNo += 1;
    const text = lineNo === 1 ? raw.replace(/^\uFEFF/, "") : raw;
    // Settle skips blank lines too, so the line numbers stay the file's own.
    if (text.trim() !== "") yield toLine(lineNo, text);
  }
}

async function fileSize(path: string): Promise<number> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError(`${path} is not a file`);
    return info.size;
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as { code?: string }).code;
    throw new CliError(code === "ENOENT" ? `${path}: no such file` : `cannot read ${path} (${code ?? "error"})`);
  }
}

export const ingest: Command = {
  name: "ingest",
  summary: "replay a JSONL log of records through the ingest API",
  help: `Usage: settle ingest <file.jsonl> --url <url> --key <key> [--batch <n>]

Sends every line of <file.jsonl> (one ingest record per line, docs/outcome-model.md §2) to
POST <url>/api/v1/envelopes as NDJSON, in requests of at most --batch records
and 1 MiB. A line over 1 MiB is rejected here without being sent. When Settle
answers 429 or 503 with a retry time, the same request is sent again after
it (ingest is idempotent by event_id, so a record sent twice is stored once).
A re-run of the same file only adds what is missing.

Options:
  --url <url>      Settle's address (default: SETTLE_PUBLIC_URL, else http://localhost:$PORT)
  --key <key>      a runtime ingest key (settle keys create <runtime>)
  --batch <n>      records per request, 1-${MAX_RECORDS} (default ${MAX_RECORDS})
  --retries <n>    attempts after the first for one request, 0-20 (default 5)

Prints accepted / duplicates / rejected, and each rejected record's line and
error (the first ${SHOWN_REJECTIONS}). Exit code 0 when every record was accepted or a
duplicate, 1 when any was rejected, 2 when Settle could not be reached or
refused the key.

Example:
  npm run -s settle -- ingest attempts.jsonl --url http://localhost:3000 --key "$KEY"`,
  options: { url: { type: "string" }, key: { type: "string" }, batch: { type: "string" }, retries: { type: "string" } },
  args: { min: 1, max: 1 },
  run: async ({ values, args }, io) => {
    const path = args[0]!;
    const url = parseServerUrl(stringOption(values, "url") ?? publicUrl());
    const key = requiredString(values, "key");
    const batchSize = integerOption(values, "batch", { min: 1, max: MAX_RECORDS, fallback: MAX_RECORDS });
    const retries = integerOption(values, "retries", { min: 0, max: 20, fallback: 5 });
    const size = await fileSize(path);

    const started = Date.now();
    const progress = createProgress(io, "ingest", size);
    const client = createSettleClient({ url, key, retries, sleep: io.sleep ?? realSleep, onWait: progress.note });
    const rejections: LineResult[] = [];
    const report = await sendLines(client, readLines(path), {
      batchSize,
      onResult: (r) => {
        if (r.status === "rejected" && rejections.length < SHOWN_REJECTIONS) rejections.push(r);
      },
      onProgress: (t) => progress.update({ done: t.bytes, total: size, ...t }),
    });
    progress.stop();

    const { tally } = report;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    printLine(
      io.stdout,
      `${path}: ${plural(tally.records, "record")} in ${plural(tally.requests, "request")} to ${url.origin} (${seconds} s)`,
    );
    printLine(io.stdout, `  accepted    ${formatCount(tally.accepted)}`);
    printLine(io.stdout, `  duplicates  ${formatCount(tally.duplicates)}`);
    printLine(io.stdout, `  rejected    ${formatCount(tally.rejected)}`);
    if (rejections.length > 0) {
      const shown =
        tally.rejected > rejections.length ? `first ${rejections.length} of ${tally.rejected}` : `${tally.rejected}`;
      printLine(io.stdout, `Rejected records (${shown}):`);
      for (const r of rejections)
        printLine(io.stdout, `  line ${r.line.lineNo}: ${r.code} ${r.message ?? ""}`.trimEnd());
    }
    if (report.stopped) {
      const where = report.lastLine > 0 ? `after line ${report.lastLine}` : "before the first record was stored";
      printLine(io.stderr, `settle ingest: stopped ${where}: ${report.stopped.message}`);
      if (tally.records > 0)
        printLine(
          io.stderr,
          "What was answered is stored; run the same command again to send the rest (stored records answer duplicate).",
        );
      return report.stopped.exitCode;
    }
    if (tally.records === 0) printLine(io.stderr, `${path} has no records.`);
    return tally.rejected > 0 ? EXIT_FAILED : 0;
  },
};
