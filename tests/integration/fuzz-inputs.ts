import fc from "fast-check";
import { errorEnvelopeSchema } from "@/lib/errors";

// What an attacker, a buggy runtime or a strange upstream API sends. The
// constants are the values that once broke Settle (the issue that asked for
// this suite lists them); the generators go around them.

const sqlAndQuoting = [
  "'",
  "\\",
  "$$",
  "$s",
  "k$s",
  "$1",
  "$s$",
  "'; DROP TABLE attempts; --",
  '"',
  "%",
  "%E0%A4%A",
  "_",
  "\\x00",
];
const oddUnicode = [
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udc00y",
  "\ufeff",
  "\u202eevil",
  "😀🧪",
  "ﷺ",
  "\u0301",
  "\r",
  "\t",
];
const protoKeys = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"];

const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));

export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...sqlAndQuoting, ...oddUnicode, ...protoKeys, "", " ", "null", "a".repeat(600)),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: codeUnit, maxLength: 20 }),
  fc
    .tuple(fc.constantFrom(...sqlAndQuoting, ...oddUnicode), fc.string({ maxLength: 8 }))
    .map(([a, b]) => `${b}${a}${b}`),
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    1e13,
    1e308,
    -1e308,
    2 ** 31,
    2 ** 31 - 1,
    2 ** 32,
    2 ** 53,
    2 ** 63,
    -1,
    -0,
    0.5,
    1e-300,
    31_536_001,
    1_000_001,
    Number.MAX_SAFE_INTEGER,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

export const hostileTime: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59-23:59",
    "+275760-09-13T00:00:00.000Z",
    "-000001-01-01T00:00:00Z",
    "10000-01-01T00:00:00Z",
    "2026-13-45T99:99:99Z",
    "2026-02-30T00:00:00Z",
    "2026-11-29",
    "05:12:04",
    "25:61:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999Z",
  ),
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
);

const prototypeObject = fc.constant(
  JSON.parse('{"__proto__": {"admin": true}, "constructor": {"prototype": {"polluted": 1}}, "toString": 5}') as unknown,
);

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  hostileNumber,
  hostileText,
  prototypeObject,
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(hostileText, { maxLength: 4 }),
);

/** Element counts around the OTLP limit (lib/otlp/scan.ts: 131,072) and far past it, where a decoder built millions of objects. */
export const hostileCount: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, 1, 127, 128, 129, 131_000, 131_071, 131_072, 131_073, 1_000_000, 4_000_000),
  fc.integer({ min: 0, max: 300_000 }),
);

/** Text lengths around the 64 Ki-character cut and well past it, and tool names around the 200-character limit. */
export const hostileLength: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(65_535, 65_536, 65_537, 300_000),
  fc.integer({ min: 0, max: 200_000 }),
);
export const hostileToolName: fc.Arbitrary<string> = fc
  .tuple(hostileText, fc.oneof(fc.constantFrom(199, 200, 201, 350), fc.integer({ min: 0, max: 420 })))
  .map(([text, length]) => `${text}${"t".repeat(Math.max(0, length - text.length))}`);

function nest(depth: number, kind: "array" | "object"): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i += 1) value = kind === "array" ? [value] : { d: value };
  return value;
}
export const deepValue: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 20, max: 400 }), fc.constantFrom("array" as const, "object" as const))
  .map(([d, k]) => nest(d, k));

const duration = fc.oneof(hostileNumber, hostileNumber.map(String), hostileText);
const inner: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({
    type: fc.constant("about:blank"),
    title: hostileText,
    status: fc.oneof(fc.constantFrom(429, 503, 400, 502), hostileNumber),
    retry_after: duration,
    detail: hostileText,
  }),
  fc.record({
    ok: fc.boolean(),
    commit_state: fc.oneof(fc.constantFrom("committed", "not_committed", "unknown", "partial"), hostileText),
    code: hostileText,
    retry: fc.record({
      directive: fc.oneof(fc.constantFrom("never", "after_delay", "allowed"), hostileText),
      not_before: fc.oneof(hostileTime, hostileText),
      max_attempts_remaining: fc.oneof(hostileNumber, hostileText),
    }),
    agent_message: hostileText,
    safe_details: fc.dictionary(hostileText, fc.oneof(hostileText, hostileNumber), { maxKeys: 4 }),
    items: fc.array(
      fc.record({ item_id: fc.oneof(hostileText, hostileNumber), applied: hostileText, reason: hostileText }),
      { maxLength: 3 },
    ),
  }),
  fc.record({
    outcome: fc.constantFrom("retryable", "unknown", "ok", "permanent"),
    effect_applied: fc.oneof(fc.constantFrom("yes", "no", "partial", "unknown"), hostileText),
    retry_after_s: duration,
    deadline_left_s: duration,
  }),
);

/** An envelope in a known dialect with hostile values where its hints are: kept as evidence, never fatal. */
export const envelopeArb: fc.Arbitrary<unknown> = fc.oneof(
  inner,
  inner.map((e) => ({ content: [{ type: "text", text: JSON.stringify(e) }], isError: true })),
  fc
    .tuple(inner, hostileText)
    .map(([e, id]) => ({ type: "tool_result", tool_use_id: id, is_error: true, content: JSON.stringify(e) })),
  fc
    .tuple(inner, hostileText)
    .map(([e, id]) => ({ type: "function_call_output", call_id: id, output: JSON.stringify(e) })),
  fc.tuple(hostileText, hostileValue).map(([text, structured]) => ({
    content: [{ type: "text", text }],
    structuredContent: structured,
    isError: false,
  })),
  hostileValue,
);

let serial = 0;
const run = `fz${Date.now().toString(36)}`;
const recent = fc.integer({ min: -86_400, max: 60 }).map((s) => new Date(Date.now() + s * 1000).toISOString());
const anyText = fc.oneof(hostileText, fc.string({ minLength: 1, maxLength: 20 }));

/** A record Settle must accept whatever is inside its envelope and whatever its neighbours are. */
export const goodRecord = fc
  .record({
    idSuffix: anyText,
    task: anyText,
    tool: fc.oneof(fc.constantFrom("create_order", "charge_card", "send_email"), anyText),
    effect_class: fc.option(
      fc.oneof(
        fc.constantFrom("money", "create", "read", "send", "destructive"),
        hostileText.map((s) => s.slice(0, 64)),
      ),
    ),
    phase: fc.option(fc.constantFrom("intent", "outcome", "probe")),
    attempt: fc.option(fc.integer({ min: 0, max: 1_000_000 })),
    at: fc.option(recent),
    budget_left_s: fc.option(fc.integer({ min: 0, max: 31_536_000 })),
    idempotency_key: fc.option(fc.string({ maxLength: 512 })),
    envelope: envelopeArb,
  })
  .map(({ idSuffix, task, tool, ...r }) => {
    serial += 1;
    return {
      ...r,
      good: true as const,
      event_id: `${run}-e${serial}`,
      // Ids may hold anything but blanks at the ends (they are trimmed) and must have a character.
      invocation_id: `${run}-i${serial}-${idSuffix}`.slice(0, 256).trim(),
      task_id: `${run}-t${serial % 7}-${task}`.slice(0, 256).trim(),
      tool: `${tool}`.trim().slice(0, 200) || "tool",
    };
  });

/** A record with one thing wrong (or nearly: some mutations still pass), or a value that is no record at all. */
export const badRecord: fc.Arbitrary<unknown> = fc
  .tuple(
    goodRecord,
    fc.constantFrom(
      "at",
      "budget_left_s",
      "attempt",
      "task_id",
      "tool",
      "invocation_id",
      "event_id",
      "phase",
      "envelope",
      "idempotency_key",
      "effect_class",
    ),
    fc.oneof(hostileValue, hostileTime, hostileNumber, deepValue),
  )
  .map(([record, field, value]) => {
    const { good: _good, ...rest } = record;
    return { ...rest, [field]: value };
  });

/** A line of an NDJSON body: records, broken JSON, JSON that is no record. Never a line break inside. */
export const ndjsonLine: fc.Arbitrary<string> = fc
  .oneof(
    badRecord.map((r) => JSON.stringify(r) ?? "null"),
    hostileText,
    fc.constantFrom("{", "[1,2]", "null", '{"records":[]}', '"x"'),
  )
  .map((line) => line.replace(/\r?\n/g, " "));

/** JSON text nested past any limit (JSON.stringify of such a value would itself overflow): built as text. */
function deepText(depth: number, kind: "array" | "object", inner: string): string {
  return kind === "array"
    ? `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`
    : `${'{"d":'.repeat(depth)}${inner}${"}".repeat(depth)}`;
}
const pastTheLimit = fc.tuple(
  fc.integer({ min: 129, max: 9_000 }),
  fc.constantFrom("array" as const, "object" as const),
);

/** A JSON body nested thousands deep somewhere: the whole of it, one of its fields, or a member nobody reads. */
export const deepBody: fc.Arbitrary<string> = fc
  .tuple(
    pastTheLimit,
    fc.constantFrom(
      "whole",
      "task_id",
      "tool",
      "invocation_id",
      "idempotency_key",
      "envelope",
      "extra",
      "action",
      "note",
    ),
  )
  .map(([[depth, kind], where]) => {
    const deep = deepText(depth, kind, '"x"');
    if (where === "whole") return deep;
    const base: Record<string, unknown> = {
      task_id: "fz-deep",
      tool: "charge_card",
      idempotency_key: "k",
      action: "comment",
      version: 1,
      note: "n",
    };
    const fields = Object.entries(base)
      .filter(([k]) => k !== where)
      .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
    return `{${[...fields, `${JSON.stringify(where)}:${deep}`].join(",")}}`;
  });

/** An ingest record (as its NDJSON line or batch item) nested thousands deep in one member. */
export const deepRecordText: fc.Arbitrary<string> = fc
  .tuple(pastTheLimit, fc.constantFrom("envelope", "extra", "task_id", "tool"), fc.boolean())
  .map(([[depth, kind], where, withEventId]) => {
    const fields: Record<string, unknown> = {
      task_id: "fz-deep",
      invocation_id: "fz-deep-i",
      tool: "x",
      ...(withEventId ? { event_id: `fz-deep-${depth}-${kind}-${where}` } : {}),
    };
    delete fields[where];
    return `{${Object.entries(fields)
      .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
      .join(",")},${JSON.stringify(where)}:${deepText(depth, kind, "1")}}`;
  });

/** A body for /api/auth/*: anything from nothing to well past its 64 KiB limit, or nested deep, with its length declared or streamed. */
export const authBody: fc.Arbitrary<{ path: string; body: string; declared: boolean }> = fc.record({
  path: fc.constantFrom(
    "/api/auth/sign-in/email",
    "/api/auth/sign-up/email",
    "/api/auth/sign-out",
    "/api/auth/change-password",
    "/api/auth/update-user",
  ),
  body: fc.oneof(
    fc.integer({ min: 0, max: 200 * 1024 }).map((n) => `{"email":"fz@example.com","password":"${"p".repeat(n)}"}`),
    pastTheLimit.map(
      ([depth, kind]) => `{"email":"fz@example.com","password":"x","extra":${deepText(depth, kind, "1")}}`,
    ),
    hostileText,
  ),
  declared: fc.boolean(),
});

/** An answer to hostile input: below 500, and every error Settle's typed envelope; else the test fails naming it. */
export function expectSettled<T extends { status: number; body: unknown }>(label: string, res: T): T {
  if (res.status >= 500) throw new Error(`${label}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  if (res.status >= 400 && !errorEnvelopeSchema.safeParse(res.body).success)
    throw new Error(`${label}: ${res.status} without Settle's envelope: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res;
}

/**
 * A JSON number token JSON.parse would round (issue 36: 12345678901234567890 reached the approver as
 * 12345678901234567000), around it: 16 to 120 digits (past lib/json's 100-digit limit), either sign, with
 * a fraction or an exponent, as text, or not JSON at all (a leading zero).
 */
export const longIntegerToken: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "9007199254740992",
    "9007199254740993",
    "-9007199254740993",
    "12345678901234567890",
    "18446744073709551616",
    "1".repeat(100),
    "1".repeat(101),
    "12345678901234567890.5",
    "12345678901234567890e5",
    "-12345678901234567890E-3",
    "012345678901234567890",
    '"12345678901234567890"',
  ),
  fc
    .tuple(fc.constantFrom("", "-"), fc.integer({ min: 16, max: 120 }), fc.constantFrom("", "", ".0", "e1", "E+400"))
    .chain(([sign, length, tail]) =>
      fc.stringMatching(new RegExp(`^[1-9]\\d{${length - 1}}$`)).map((digits) => `${sign}${digits}${tail}`),
    ),
);

/** Where a long integer goes in a record: each field Settle reads, inside arguments and envelope, in JSON inside text. */
const longIntegerPlaces = [
  "attempt",
  "budget_left_s",
  "at",
  "task_id",
  "tool",
  "effect_class",
  "idempotency_key",
  "args_digest",
  "arguments.order",
  "arguments.lines.0.sku",
  "envelope.retry_after",
  "envelope.status",
  "envelope.retry.max_attempts_remaining",
  "envelope.safe_details.order",
  "envelope.items.0.item_id",
  "extra",
] as const;
const LONG_INTEGER_SLOT = "@@long-integer@@";

/** A record's JSON text with a long integer token in one place, or in JSON written inside one of its texts. */
export const longIntegerRecordText: fc.Arbitrary<{ text: string; place: string; token: string }> = fc
  .tuple(goodRecord, fc.constantFrom(...longIntegerPlaces), longIntegerToken, fc.boolean())
  .map(([record, place, token, inText]) => {
    const { good: _good, ...rest } = record;
    const value: Record<string, unknown> = {
      ...rest,
      arguments: { order: 1, lines: [{ sku: 2 }] },
      envelope: {
        status: 504,
        retry: { directive: "after_delay" },
        safe_details: {},
        items: [{ item_id: 1 }],
        content: [{ type: "text", text: `{"order": ${LONG_INTEGER_SLOT}}` }],
      },
    };
    let at: Record<string, unknown> = value;
    const steps = place.split(".");
    for (const step of steps.slice(0, -1)) at = at[step] as Record<string, unknown>;
    at[steps.at(-1)!] = LONG_INTEGER_SLOT;
    const text = JSON.stringify(value)
      .replace(`"${LONG_INTEGER_SLOT}"`, token)
      .replace(LONG_INTEGER_SLOT, inText ? token.replaceAll('"', '\\"') : "1");
    return { text, place, token };
  });
