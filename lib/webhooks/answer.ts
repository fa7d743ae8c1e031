// What the delivery log keeps of a receiver's answer. The log is shown to
// admins, and the receiver may be anything the URL reached, so it keeps a
// short, printable snippet of a text answer and never more: at most
// READ_LIMIT_BYTES are read (the rest is never downloaded) and at most
// SNIPPET_MAX_CHARS stored.

export const READ_LIMIT_BYTES = 4096;
export const SNIPPET_MAX_CHARS = 200;

/** The part of an HTTP answer Settle looks at; a fetch Response is one. */
export type Answer = { status: number; headers: Headers; body: ReadableStream<Uint8Array> | null };

/** text/*, application/json and any +json type: the answers whose words can help an admin. */
export function isTextContentType(contentType: string | null): boolean {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return type.startsWith("text/") || type === "application/json" || /^application\/[\w.+-]+\+json$/.test(type);
}

// Controls, format characters (bidi overrides, zero-width joiners), private use, unassigned,
// surrogates, line/paragraph separators and U+FFFD (what undecodable bytes become).
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\uFFFD]/gu;

/** One line of printable text, at most `max` characters (code points, so no pair is split). */
export function printableSnippet(text: string, max = SNIPPET_MAX_CHARS): string {
  const clean = text.replace(UNPRINTABLE, " ").replace(/\s+/g, " ").trim();
  const chars = Array.from(clean);
  return chars.length <= max ? clean : `${chars.slice(0, max - 1).join("")}…`;
}

/** Reads at most `limit` bytes, then cancels the stream so the rest is not downloaded. */
export async function readAtMost(body: ReadableStream<Uint8Array>, limit = READ_LIMIT_BYTES): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let finished = false;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        break;
      }
      const part = value.subarray(0, limit - size);
      chunks.push(part);
      size += part.length;
    }
  } catch {
    // A body cut off (timeout, reset) still has its first bytes to show.
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${Math.round(bytes / (1024 * 1024))} MiB`;
}

/** The text the log keeps of an answer's body: a printable snippet of at most `max` characters, a note for a binary one, or "". */
export async function describeAnswerBody(answer: Answer, max = SNIPPET_MAX_CHARS): Promise<string> {
  if (!answer.body) return "";
  if (!isTextContentType(answer.headers.get("content-type"))) {
    // Binary (or unlabelled) bytes are never stored: only how many there were.
    const declared = Number(answer.headers.get("content-length") ?? Number.NaN);
    let size = declared;
    if (Number.isSafeInteger(declared) && declared >= 0) await answer.body.cancel().catch(() => {});
    else size = (await readAtMost(answer.body)).length;
    if (size === 0) return "";
    return `(binary answer, ${size >= READ_LIMIT_BYTES && !Number.isSafeInteger(declared) ? `${formatSize(READ_LIMIT_BYTES)} or more` : formatSize(size)})`;
  }
  const bytes = await readAtMost(answer.body);
  return printableSnippet(new TextDecoder("utf-8").decode(bytes), max);
}
