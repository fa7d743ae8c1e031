// JSON whose integers keep every digit (decision 039). JSON.parse reads
// 12345678901234567890 as 12345678901234567000: a caller's order number, an
// account id or an amount in minor units above 2^53 would reach the approver
// rounded, and two calls that differ only in those digits would share a
// digest. Here an integer JSON.parse cannot hold exactly becomes a BigInt
// with its digits, and writing JSON writes a BigInt as those digits.
//
// Both directions are JSON.parse and JSON.stringify themselves, so ordinary
// text costs one test for a run of 16 digits. Text with such a run is scanned
// once for number tokens outside strings; each integer beyond ±(2^53 − 1) is
// rewritten as a string carrying a marker no caller can send (a random value
// drawn per process), parsed natively, and the marked strings are turned into
// BigInts. Writing does the reverse. Pure, and the same in the browser.

/**
 * Numbers of 16 digits or more may be past 2^53 (9007199254740991 has 16). Written out, not `\d{16}`: V8 scans
 * text for this form about three times as fast (0.06 ms for a 170 KB ingest batch, a thirtieth of JSON.parse).
 */
const LONG_RUN = new RegExp("[0-9]".repeat(16));

// A string token (skipped whole, so digits inside strings are never read) or an integer of 16+ digits that
// starts a number (not inside a fraction or an exponent) and ends it.
const TOKENS = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"|(?<![\w.+-])-?\d{16,}(?![.eE\d])/g;

function randomTag(): string {
  const bytes = new Uint8Array(12);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// Letters and digits only, so JSON.stringify writes it as it is and a caller who never saw it cannot send it.
const MARK = `exactint${randomTag()}x`;
const MARKED = new RegExp(`"${MARK}(-?\\d+)"`, "g");

/** Whether JSON text may hold an integer JSON.parse would round (a run of 16 digits, anywhere): otherwise parse it natively. */
export function mayHoldLongInteger(text: string): boolean {
  return LONG_RUN.test(text);
}

/**
 * The most digits an integer is kept exact with: 2^256 has 78 (a 256-bit id or amount). Longer ones are read as
 * JSON.parse reads them, because turning digits into a BigInt and back costs time that grows faster than their
 * length (500,000 digits: a third of a second each way), and a 1 MiB body could hold one.
 */
export const MAX_EXACT_DIGITS = 100;

/** An integer literal JSON.parse cannot give back exactly, short enough to keep exact. */
function isUnsafeInteger(token: string): boolean {
  const digits = token.charCodeAt(0) === 0x2d ? token.length - 1 : token.length;
  return digits <= MAX_EXACT_DIGITS && !Number.isSafeInteger(Number(token));
}

/** Marked strings become BigInts, in place (the value was parsed just now): iterative, as a body may nest deep. */
function reviveMarked(root: unknown): unknown {
  const revive = (v: unknown) => (typeof v === "string" && v.startsWith(MARK) ? BigInt(v.slice(MARK.length)) : v);
  if (typeof root !== "object" || root === null) return revive(root);
  const stack: object[] = [root];
  while (stack.length > 0) {
    const current = stack.pop()! as Record<string, unknown>;
    for (const key of Object.keys(current)) {
      const v = current[key];
      if (typeof v === "object" && v !== null) stack.push(v);
      else if (typeof v === "string" && v.startsWith(MARK)) current[key] = revive(v);
    }
  }
  return root;
}

/**
 * JSON.parse, except that an integer outside ±(2^53 − 1) is a BigInt holding its exact digits. Invalid text
 * throws JSON.parse's own error.
 */
export function parseExactJson(text: string): unknown {
  if (!mayHoldLongInteger(text)) return JSON.parse(text) as unknown;
  let marked = false;
  const rewritten = text.replace(TOKENS, (token: string) => {
    if (token.charCodeAt(0) === 0x22 || !isUnsafeInteger(token)) return token;
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
  return reviveMarked(parsed);
}

const markBigInt = (_key: string, v: unknown) => (typeof v === "bigint" ? `${MARK}${v.toString()}` : v);

/** JSON.stringify, except that a BigInt is written as its digits (a JSON number), as parseExactJson reads it. */
export function stringifyExactJson(value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, null, space);
  } catch (error) {
    if (!(error instanceof TypeError) || !/BigInt/i.test(error.message)) throw error;
  }
  return JSON.stringify(value, markBigInt, space).replace(MARKED, "$1");
}

/** Whether a value holds a BigInt anywhere (iterative). */
export function holdsBigInt(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "bigint") return true;
    if (typeof v === "object" && v !== null) for (const item of Object.values(v)) stack.push(item);
  }
  return false;
}

/**
 * The value with every BigInt as the nearest number, for the fields Settle computes with (an attempt number, a
 * budget): they behave exactly as JSON.parse made them. Only a part that holds one is copied. Recursive: for
 * values whose depth was checked (lib/json/depth.ts).
 */
export function roundBigInts<T>(value: T): T {
  if (typeof value === "bigint") return Number(value) as T;
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i += 1) {
      const r = roundBigInts(value[i] as unknown);
      if (r !== value[i] && out === null) out = value.slice(0, i);
      out?.push(r);
    }
    return (out ?? value) as T;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  let changed = false;
  const rounded = entries.map(([k, v]) => {
    const r = roundBigInts(v);
    if (r !== v) changed = true;
    return [k, r] as const;
  });
  // fromEntries defines own properties: a key such as "__proto__" stays data.
  return (changed ? Object.fromEntries(rounded) : value) as T;
}
