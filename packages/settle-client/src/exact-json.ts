// JSON whose integers keep every digit, as Settle reads and writes them (its decision 039). JSON.parse reads
// 12345678901234567891 as 12345678901234567000: an order number a person approved with edits would reach the tool
// rounded, and the run would be flagged as made with other arguments. Here an integer past ±(2^53 − 1) (of up to
// 100 digits) is read as a bigint holding its digits, and a bigint is written as its digits, a JSON number.
//
// A copy of Settle's lib/json/exact.ts, kept to what the client needs: this package is published alone and
// imports nothing from the app. tests/integration/long-integers-clients.test.ts checks the two agree.

/** A run of 16 digits: text without one holds no integer past 2^53 and is read by JSON.parse alone. */
const LONG_RUN = new RegExp("[0-9]".repeat(16));
/** A string (skipped whole) or an integer of 16+ digits that is a whole number token. */
const TOKENS = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"|(?<![\w.+-])-?\d{16,}(?![.eE\d])/g;
/** Longer integers are read as JSON.parse reads them: BigInt's cost grows faster than their length. */
const MAX_EXACT_DIGITS = 100;

/** A marker no answer holds by chance, drawn once per process (letters and digits, so JSON keeps it as it is). */
function randomTag(): string {
  const bytes = new Uint8Array(12);
  // Where Web Crypto's global is missing (Node 18 without its flag), Math.random draws it.
  if (globalThis.crypto?.getRandomValues) globalThis.crypto.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i += 1) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const MARK = `exactint${randomTag()}x`;
const MARKED = new RegExp(`"${MARK}(-?\\d+)"`, "g");

function isUnsafeInteger(token: string): boolean {
  const digits = token.startsWith("-") ? token.length - 1 : token.length;
  return digits <= MAX_EXACT_DIGITS && !Number.isSafeInteger(Number(token));
}

/** JSON.parse, except that an integer outside ±(2^53 − 1) is a bigint with its exact digits. */
export function parseExactJson(text: string): unknown {
  if (!LONG_RUN.test(text)) return JSON.parse(text) as unknown;
  let marked = false;
  const rewritten = text.replace(TOKENS, (token) => {
    if (token.startsWith('"') || !isUnsafeInteger(token)) return token;
    marked = true;
    return `"${MARK}${token}"`;
  });
  if (!marked) return JSON.parse(text) as unknown;
  let parsed: unknown;
  try {
    parsed = JSON.parse(rewritten) as unknown;
  } catch {
    // The rewrite never makes valid JSON invalid: the text was invalid, and its error is JSON.parse's.
    return JSON.parse(text) as unknown;
  }
  // Iterative, in place: the value was parsed just now, and may nest deep.
  const revive = (v: unknown) => (typeof v === "string" && v.startsWith(MARK) ? BigInt(v.slice(MARK.length)) : v);
  if (typeof parsed !== "object" || parsed === null) return revive(parsed);
  const stack: object[] = [parsed];
  while (stack.length > 0) {
    const current = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(current)) {
      const v = current[key];
      if (typeof v === "object" && v !== null) stack.push(v);
      else if (typeof v === "string") current[key] = revive(v);
    }
  }
  return parsed;
}

/** JSON.stringify, except that a bigint is written as its digits (a JSON number). */
export function stringifyExactJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError) || !/BigInt/i.test(error.message)) throw error;
  }
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${MARK}${v.toString()}` : v)).replace(
    MARKED,
    "$1",
  );
}
