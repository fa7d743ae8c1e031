import { ApiError } from "../errors";

// The one reader of request bodies (JSON routes, ingest, OTLP, /api/auth/*).
// It counts bytes as they arrive: a body over the limit is refused by its
// Content-Length before a byte is read, or at the chunk that crosses the
// limit, so an oversized request never sits whole in memory. A compressed
// body (OTLP's gzip) is counted twice: as sent, and as it inflates, so a small
// body that inflates without end is stopped at its limit too. Nothing is read
// until a route asks, and routes ask after authenticating: the fast lane hands
// them node's request unread (server/fast-lane.ts).

export type BodyLimits = { maxBytes: number; advice: string; gzip?: { maxInflatedBytes: number } };

/** The client went away, or its connection broke, while its body was being read: its request failed, not Settle. */
function brokenOff(): ApiError {
  return new ApiError(
    "INVALID_REQUEST",
    "The request's body ended before it was complete (the connection broke off); nothing was read from it.",
  );
}

async function collect(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  refuse: (what: string) => ApiError,
  what: string,
  failed: (error: unknown) => ApiError,
): Promise<Buffer> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch (error) {
      throw error instanceof ApiError ? error : failed(error);
    }
    if (next.done) break;
    const value = next.value;
    size += value.byteLength;
    if (size > maxBytes) {
      // The rest is never pulled: the server discards it (or the connection closes).
      await reader.cancel().catch(() => undefined);
      throw refuse(`The body is over ${maxBytes} bytes${what}`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export async function readBodyBytes(req: Request, limits: BodyLimits): Promise<Buffer> {
  const { maxBytes, advice } = limits;
  const refuse = (what: string, limit = maxBytes) =>
    new ApiError("PAYLOAD_TOO_LARGE", `${what}; the limit is ${limit} bytes. ${advice}`, { limit_bytes: limit });
  const declared = Number(req.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw refuse(`The body is ${declared} bytes`);
  if (!req.body) return Buffer.alloc(0);
  if (!limits.gzip) return collect(req.body, maxBytes, refuse, "", brokenOff);
  let sent = 0;
  const counted = req.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        sent += chunk.byteLength;
        if (sent > maxBytes) controller.error(refuse(`The body is over ${maxBytes} bytes`));
        else controller.enqueue(chunk);
      },
    }),
  );
  const inflated = counted.pipeThrough(
    new DecompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>,
  );
  const max = limits.gzip.maxInflatedBytes;
  const undecodable = (error: unknown) =>
    new ApiError(
      "INVALID_ENCODING",
      `The body is sent as gzip (Content-Encoding: gzip) but does not decompress (${error instanceof Error ? error.message : "gzip error"}).`,
    );
  return collect(inflated, max, (what) => refuse(what, max), " once decompressed", undecodable);
}

export async function readBodyLimited(req: Request, maxBytes: number, advice: string): Promise<string> {
  return (await readBodyBytes(req, { maxBytes, advice })).toString("utf8");
}
