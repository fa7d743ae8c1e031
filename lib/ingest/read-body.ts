import { ApiError } from "../errors";
import { readBodyLimited } from "../http/read-body";
import { mayHoldLongInteger, parseExactJson } from "../json/exact";

// Reads an ingest body under docs/outcome-model.md §2's limits before anything is parsed.

export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_RECORDS = 500;

/**
 * `longIntegers`: the body may hold an integer past 2^53, parsed as a BigInt (lib/json) to keep its digits in
 * `arguments` and `envelope`; ingest rounds it everywhere else (lib/ingest/record.ts).
 */
export type ParsedBody = { records: unknown[]; lineErrors: Map<number, string>; longIntegers: boolean };

function mediaType(req: Request): string {
  return (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

function tooMany(count: number): ApiError {
  return new ApiError("TOO_MANY_RECORDS", `${count} records in one request; the limit is ${MAX_RECORDS}.`, {
    limit_records: MAX_RECORDS,
    records: count,
  });
}

export async function parseIngestBody(req: Request): Promise<ParsedBody> {
  const type = mediaType(req);
  const ndjson = type === "application/x-ndjson" || type === "application/jsonl";
  if (type !== "application/json" && !ndjson) {
    throw new ApiError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content-Type ${type || "(none)"} is not accepted; send application/json or application/x-ndjson.`,
    );
  }
  const text = await readBodyLimited(req, MAX_BODY_BYTES, "Split it into several requests.");
  // One scan of the text; without a run of 16 digits it is JSON.parse's alone.
  const longIntegers = mayHoldLongInteger(text);
  const parse = longIntegers ? parseExactJson : (t: string) => JSON.parse(t) as unknown;
  if (ndjson) {
    // One bad line rejects that record, not the batch.
    const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
    if (lines.length > MAX_RECORDS) throw tooMany(lines.length);
    const lineErrors = new Map<number, string>();
    const records = lines.map((line, i) => {
      try {
        return parse(line);
      } catch (error) {
        lineErrors.set(i, error instanceof Error ? error.message : "unparsable line");
        return undefined;
      }
    });
    if (records.length === 0) throw new ApiError("INVALID_REQUEST", "The body has no records.");
    return { records, lineErrors, longIntegers };
  }
  let body: unknown;
  try {
    body = parse(text);
  } catch (error) {
    throw new ApiError(
      "INVALID_JSON",
      `The body is not valid JSON: ${error instanceof Error ? error.message : "parse error"}.`,
    );
  }
  const records = Array.isArray(body)
    ? body
    : typeof body === "object" && body !== null && Array.isArray((body as { records?: unknown }).records)
      ? (body as { records: unknown[] }).records
      : [body];
  if (records.length > MAX_RECORDS) throw tooMany(records.length);
  if (records.length === 0) throw new ApiError("INVALID_REQUEST", "The body has no records.");
  return { records, lineErrors: new Map(), longIntegers };
}
