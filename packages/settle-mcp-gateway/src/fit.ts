// Settle refuses a request body over 1 MiB (413), so a record whose envelope
// is larger could never be recorded: a server's large result, or a call's
// large arguments. Such an envelope is cut to fit before it is reported or
// spooled, keeping what Settle reads it for (isError, the structured
// content, the gateway's decision, the tool's name) and saying what was cut
// in `settle.dev/truncated`. The full answer still goes to the client.

/** An envelope's JSON after cutting; the record around it and the batch wrapper stay well under 1 MiB. */
export const ENVELOPE_MAX_BYTES = 512 * 1024;
/** A part of an envelope kept whole up to this size; larger parts are cut to it. */
const PART_MAX_BYTES = 64 * 1024;
/** Objects deeper than this are cut as a whole: a server's answer may nest without limit. */
const DEPTH_MAX = 6;

export const TRUNCATED_KEY = "settle.dev/truncated";

const bytesOf = (value: unknown): number => {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? "null");
  } catch {
    // Too deep to serialize: as large as can be, so it is cut.
    return Number.POSITIVE_INFINITY;
  }
};

const marker = (bytes: number) => ({ [TRUNCATED_KEY]: { original_bytes: Number.isFinite(bytes) ? bytes : null } });

function cutText(text: string, keep: number): string {
  return text.length <= keep ? text : `${text.slice(0, keep)}… [cut by settle-mcp: ${text.length} characters]`;
}

function cut(value: unknown, budget: number, depth: number): unknown {
  const bytes = bytesOf(value);
  if (bytes <= budget) return value;
  if (typeof value === "string") return cutText(value, Math.max(0, Math.floor(budget / 4) - 64));
  if (value === null || typeof value !== "object" || depth >= DEPTH_MAX) return marker(bytes);
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    let used = 2;
    for (const item of value) {
      const part = cut(item, Math.min(PART_MAX_BYTES, budget - used), depth + 1);
      const size = bytesOf(part) + 1;
      if (used + size > budget - 128) {
        kept.push(marker(bytes));
        break;
      }
      kept.push(part);
      used += size;
    }
    return kept;
  }
  const out: Record<string, unknown> = {};
  let used = 2;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const part = cut(child, Math.min(PART_MAX_BYTES, Math.max(0, budget - used)), depth + 1);
    const size = bytesOf(part) + Buffer.byteLength(key) + 4;
    if (used + size > budget - 128) {
      out[key] = marker(bytesOf(child));
      continue;
    }
    out[key] = part;
    used += size;
  }
  return { ...out, ...marker(bytes) };
}

/** The envelope unchanged when it fits in `max` bytes of JSON; otherwise cut to fit, marked. */
export function fitEnvelope(envelope: unknown, max = ENVELOPE_MAX_BYTES): unknown {
  if (envelope === undefined) return undefined;
  const bytes = bytesOf(envelope);
  if (bytes <= max) return envelope;
  const fitted = cut(envelope, max, 0);
  // Every branch above leaves room; this is the backstop for a shape it did not foresee.
  return bytesOf(fitted) <= max ? fitted : marker(bytes);
}
