import { describe, expect, it } from "vitest";
import { MAX_LIST, MAX_TEXT, readSpan, textCut, type SpanSource } from "./read-spans";

// What one span may cost once decoded: at most 128 entries of any list (its
// attributes, its events, an event's attributes, an array, a kvlist) are
// read, a text is cut at 64 Ki characters with a marker, and what was left
// out is counted so the evidence can say so.

const SOURCE: SpanSource = { resource: {}, scope: { name: null, version: null } };
const kv = (key: string, value: object) => ({ key, value });
const base = {
  traceId: "5b8efff798038103d269b633813fc60c",
  spanId: "eee19b7ec3c1b174",
  name: "execute_tool t",
  startTimeUnixNano: "1764655924123000000",
  endTimeUnixNano: "1764655924623000000",
};

describe("reading a span, within its limits", () => {
  it("reads the first 128 attributes, events and event attributes", () => {
    const attributes = Array.from({ length: 1000 }, (_, i) => kv(`a${i}`, { intValue: i }));
    const events = Array.from({ length: 300 }, (_, i) => ({ name: `e${i}`, attributes: i === 0 ? attributes : [] }));
    const { span } = readSpan({ ...base, attributes, events }, SOURCE);
    expect(Object.keys(span.attributes)).toHaveLength(MAX_LIST);
    expect(span.attributes.a127).toBe(127);
    expect(span.attributes.a128).toBeUndefined();
    expect(span.events).toHaveLength(MAX_LIST);
    expect(Object.keys(span.events[0]!.attributes)).toHaveLength(MAX_LIST);
    expect(span.reading).toMatchObject({
      attributes: 2 * (1000 - MAX_LIST),
      events: 300 - MAX_LIST,
      items: 0,
      texts: 0,
    });
  });

  it("reads the first 128 items of an array and entries of a kvlist", () => {
    const values = Array.from({ length: 4000 }, () => ({ stringValue: "" }));
    const entries = Array.from({ length: 500 }, (_, i) => kv(`k${i}`, { boolValue: true }));
    const { span } = readSpan(
      { ...base, attributes: [kv("arr", { arrayValue: { values } }), kv("map", { kvlistValue: { values: entries } })] },
      SOURCE,
    );
    expect(span.attributes.arr).toHaveLength(MAX_LIST);
    expect(Object.keys(span.attributes.map as object)).toHaveLength(MAX_LIST);
    expect(span.reading).toMatchObject({ items: 4000 - MAX_LIST, attributes: 500 - MAX_LIST });
  });

  it("cuts texts at 64 Ki characters with a marker: values, keys, names, messages, never inside a surrogate pair", () => {
    const long = "x".repeat(MAX_TEXT + 10);
    const emoji = `${"y".repeat(MAX_TEXT - 1)}😀tail`;
    const { span } = readSpan(
      {
        ...base,
        name: long,
        status: { code: 2, message: long },
        attributes: [kv("v", { stringValue: long }), kv(long, { intValue: 1 }), kv("e", { stringValue: emoji })],
        events: [{ name: long }],
      },
      SOURCE,
    );
    const cut = `${"x".repeat(MAX_TEXT)}${textCut(MAX_TEXT + 10)}`;
    expect(span.attributes.v).toBe(cut);
    expect(span.attributes[cut]).toBe(1);
    expect(span.name).toBe(cut);
    expect(span.status.message).toBe(cut);
    expect(span.events[0]!.name).toBe(cut);
    expect(span.attributes.e).toBe(`${"y".repeat(MAX_TEXT - 1)}${textCut(emoji.length)}`);
    expect(span.reading.texts).toBe(6);
  });

  it("a span within every limit is read whole, and its reading says nothing was left out", () => {
    const { span } = readSpan(
      { ...base, attributes: [kv("a", { arrayValue: { values: [{ stringValue: "x" }, { intValue: 2 }] } })] },
      SOURCE,
    );
    expect(span.attributes).toEqual({ a: ["x", 2] });
    expect(span.reading).toEqual({
      characters: base.name.length + "a".length + "x".length,
      values: 3,
      attributes: 0,
      events: 0,
      items: 0,
      texts: 0,
    });
  });
});
