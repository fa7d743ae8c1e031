import { createHash } from "node:crypto";

// The one byte form of a JSON value that is signed and hashed: object members sorted by key (UTF-16 code
// units, as RFC 8785 orders them), no whitespace, strings and numbers as JSON.stringify writes them, and a
// BigInt (an integer past 2^53 that lib/json kept exact) as its digits. Pure: the CLI's offline check
// computes the same bytes from a file as the server did before signing it.

export class NotCanonicalJson extends Error {}

/** The canonical JSON text of a value. Iterative, so a deep value cannot exhaust the stack. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Each frame writes one value; containers push their parts back to front.
  const stack: Array<{ value: unknown } | { raw: string }> = [{ value }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if ("raw" in frame) {
      out.push(frame.raw);
      continue;
    }
    const v = frame.value;
    if (v === null) out.push("null");
    else if (typeof v === "boolean") out.push(v ? "true" : "false");
    else if (typeof v === "bigint") out.push(v.toString());
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) throw new NotCanonicalJson(`${v} is not a JSON number`);
      out.push(JSON.stringify(v));
    } else if (typeof v === "string") out.push(JSON.stringify(v));
    else if (Array.isArray(v)) {
      const parts: Array<{ value: unknown } | { raw: string }> = [{ raw: "[" }];
      v.forEach((item, i) => {
        if (i > 0) parts.push({ raw: "," });
        parts.push({ value: item === undefined ? null : item });
      });
      parts.push({ raw: "]" });
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
    } else if (typeof v === "object") {
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([, item]) => item !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const parts: Array<{ value: unknown } | { raw: string }> = [{ raw: "{" }];
      entries.forEach(([key, item], i) => {
        parts.push({ raw: `${i > 0 ? "," : ""}${JSON.stringify(key)}:` });
        parts.push({ value: item });
      });
      parts.push({ raw: "}" });
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
    } else {
      throw new NotCanonicalJson(`a ${typeof v} is not a JSON value`);
    }
  }
  return out.join("");
}

/** SHA-256 of a value's canonical JSON, hex. */
export function digestOf(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value), "utf8").digest("hex");
}
