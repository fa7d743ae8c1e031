import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  holdsBigInt,
  MAX_EXACT_DIGITS,
  mayHoldLongInteger,
  parseExactJson,
  roundBigInts,
  stringifyExactJson,
} from "./exact";

const integerText = fc
  .tuple(fc.boolean(), fc.integer({ min: 1, max: 40 }))
  .chain(([negative, length]) =>
    fc.stringMatching(new RegExp(`^[1-9]\\d{${length - 1}}$`)).map((digits) => `${negative ? "-" : ""}${digits}`),
  );

/** A JSON text with the integer somewhere inside arrays and objects, `depth` levels down. */
const nested = (digits: string, path: Array<string | number>) =>
  path.reduceRight<string>(
    (inner, step) =>
      typeof step === "number" ? `[${"0,".repeat(step)}${inner}]` : `{${JSON.stringify(step)}:${inner}}`,
    digits,
  );

describe("parseExactJson", () => {
  it("keeps the digits of an integer JSON.parse would round, as a BigInt", () => {
    const parsed = parseExactJson('{"order":12345678901234567890,"n":[-99999999999999999999,9007199254740993]}');
    expect(parsed).toEqual({ order: 12345678901234567890n, n: [-99999999999999999999n, 9007199254740993n] });
    expect(JSON.parse('{"order":12345678901234567890}')).toEqual({ order: 12345678901234567000 });
  });

  it("reads every other number as JSON.parse does: safe integers, fractions, exponents stay numbers", () => {
    const text =
      "[9007199254740991,-9007199254740991,1234567890123456,0.12345678901234567890,1.5e300,12345678901234567890.5,1e12345678901234567,-0]";
    expect(parseExactJson(text)).toEqual(JSON.parse(text));
    expect(holdsBigInt(parseExactJson(text))).toBe(false);
  });

  it("keeps up to MAX_EXACT_DIGITS digits exact; a longer integer is read as JSON.parse reads it, in linear time", () => {
    const longest = `9${"8".repeat(MAX_EXACT_DIGITS - 1)}`;
    expect(parseExactJson(`[${longest}, -${longest}]`)).toEqual([BigInt(longest), -BigInt(longest)]);
    const over = `[${longest}7, ${"9".repeat(400)}]`;
    expect(parseExactJson(over)).toEqual(JSON.parse(over));
    // Half a million digits: BigInt would take a third of a second to write back; this reads it as a double.
    const huge = `{"a": ${"7".repeat(500_000)}}`;
    const started = performance.now();
    expect(parseExactJson(huge)).toEqual({ a: Infinity });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("leaves digits inside strings and keys alone", () => {
    const text =
      '{"12345678901234567890":"card 4111111111111111 ref 12345678901234567890","q":"\\"12345678901234567890"}';
    expect(parseExactJson(text)).toEqual(JSON.parse(text));
  });

  it("does not mistake a string spelt like its marker for a number", () => {
    const text = '{"a":"exactint000000000000000000000000x12345678901234567890","b":12345678901234567890}';
    const parsed = parseExactJson(text) as Record<string, unknown>;
    expect(parsed.a).toBe("exactint000000000000000000000000x12345678901234567890");
    expect(parsed.b).toBe(12345678901234567890n);
  });

  it("throws JSON.parse's own error for text that is not JSON", () => {
    for (const bad of ['{"a":12345678901234567890', '{"a":12345678901234567890,}', "[12345678901234567890 1]"]) {
      let expected = "";
      try {
        JSON.parse(bad);
      } catch (error) {
        expected = (error as Error).message;
      }
      expect(() => parseExactJson(bad)).toThrow(expected);
    }
  });

  it("reads a body nested 100,000 deep with a long integer at the bottom without overflowing the stack", () => {
    const depth = 100_000;
    const parsed = parseExactJson(`${"[".repeat(depth)}12345678901234567890${"]".repeat(depth)}`);
    let at: unknown = parsed;
    for (let i = 0; i < depth; i += 1) at = (at as unknown[])[0];
    expect(at).toBe(12345678901234567890n);
  });

  it("(property) any JSON text parses as JSON.parse parses it, when it holds no integer past 2^53", () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const exact = parseExactJson(text);
        if (!holdsBigInt(exact)) expect(exact).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it("(property) an integer of up to 40 digits at any depth comes back with every digit", () => {
    fc.assert(
      fc.property(
        integerText,
        fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer({ min: 0, max: 3 })), { maxLength: 12 }),
        (digits, path) => {
          const at = (value: unknown) =>
            path.reduce<unknown>((v, step) => (v as Record<string | number, unknown>)[step], value);
          const parsed = parseExactJson(nested(digits, path));
          expect(String(at(parsed))).toBe(digits);
          expect(typeof at(parsed)).toBe(Number.isSafeInteger(Number(digits)) ? "number" : "bigint");
          const written = stringifyExactJson(parsed);
          expect(written).toContain(digits);
          expect(String(at(parseExactJson(written)))).toBe(digits);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("stringifyExactJson", () => {
  it("writes what JSON.stringify writes when there is no BigInt, spacing included", () => {
    const value = { a: [1, "x", null, { b: true }], c: "ü\u0000", d: undefined };
    expect(stringifyExactJson(value)).toBe(JSON.stringify(value));
    expect(stringifyExactJson(value, 2)).toBe(JSON.stringify(value, null, 2));
  });

  it("writes a BigInt as its digits, a JSON number", () => {
    expect(stringifyExactJson({ a: 12345678901234567890n, b: [-1n, "1"] })).toBe(
      '{"a":12345678901234567890,"b":[-1,"1"]}',
    );
    expect(stringifyExactJson({ a: 12345678901234567890n }, 2)).toBe('{\n  "a": 12345678901234567890\n}');
    expect(stringifyExactJson(5n)).toBe("5");
  });

  it("still throws for what JSON cannot hold (a cycle)", () => {
    const cycle: Record<string, unknown> = { a: 1n };
    cycle.self = cycle;
    expect(() => stringifyExactJson(cycle)).toThrow(TypeError);
  });
});

describe("roundBigInts and mayHoldLongInteger", () => {
  it("rounds every BigInt and returns a value that holds none as it is", () => {
    const plain = { a: [1, { b: "2" }] };
    expect(roundBigInts(plain)).toBe(plain);
    expect(roundBigInts({ a: [1n, { b: 12345678901234567890n }], c: plain })).toEqual({
      a: [1, { b: 12345678901234567000 }],
      c: plain,
    });
  });

  it("says a text needs the exact reading only when it has a run of 16 digits", () => {
    expect(mayHoldLongInteger('{"a":900719925474099}')).toBe(false);
    expect(mayHoldLongInteger('{"a":9007199254740993}')).toBe(true);
  });
});
