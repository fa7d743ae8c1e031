import { ApiError } from "../errors";

// Reads a request body, counting bytes as they arrive: a body over the limit
// is refused by its Content-Length before a byte is read, or at the chunk that
// crosses the limit, so an oversized request never sits whole in memory.

export async function readBodyLimited(req: Request, maxBytes: number, advice: string): Promise<string> {
  const refuse = (what: string) =>
    new ApiError("PAYLOAD_TOO_LARGE", `${what}; the limit is ${maxBytes} bytes. ${advice}`, { limit_bytes: maxBytes });
  const declared = Number(req.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw refuse(`The body is ${declared} bytes`);
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw refuse(`The body is over ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
