import { describe, expect, it } from "vitest";
import {
  describeAnswerBody,
  isTextContentType,
  printableSnippet,
  READ_LIMIT_BYTES,
  readAtMost,
  SNIPPET_MAX_CHARS,
} from "./answer";

// What the delivery log keeps of an answer: bounded reads, printable text only.

/** A stream of `chunks` chunks of `size` bytes that counts how many were pulled and whether it was cancelled. */
function countingStream(chunks: number, size: number, byte = 0x61) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.pulled >= chunks) return controller.close();
        seen.pulled++;
        controller.enqueue(new Uint8Array(size).fill(byte));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

describe("isTextContentType", () => {
  it.each([
    ["text/plain", true],
    ["text/html; charset=utf-8", true],
    ["application/json", true],
    ["Application/JSON; charset=utf-8", true],
    ["application/problem+json", true],
    ["application/octet-stream", false],
    ["image/png", false],
    ["application/jsonp", false],
    ["", false],
    [null, false],
  ] as const)("%s → %s", (type, text) => {
    expect(isTextContentType(type)).toBe(text);
  });
});

describe("printableSnippet", () => {
  it("turns controls, format characters and line breaks into single spaces", () => {
    expect(printableSnippet("a\u0000b\x1b[31mc\r\n\td\u202Ee\u200Bf\u2028g\uFFFDh\u0085i\uE000j")).toBe(
      "a b [31mc d e f g h i j",
    );
  });
  it("keeps printable non-ASCII text", () => {
    expect(printableSnippet("Fehler: Zahlung abgelehnt — 支払い拒否 ✓")).toBe(
      "Fehler: Zahlung abgelehnt — 支払い拒否 ✓",
    );
  });
  it("stops at the limit, in code points, marking the cut", () => {
    const cut = printableSnippet("😀".repeat(500));
    expect(Array.from(cut)).toHaveLength(SNIPPET_MAX_CHARS);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut.toWellFormed()).toBe(cut);
    expect(printableSnippet("x".repeat(SNIPPET_MAX_CHARS))).toBe("x".repeat(SNIPPET_MAX_CHARS));
    expect(printableSnippet("abcdef", 4)).toBe("abc…");
  });
});

describe("readAtMost", () => {
  it("reads no more than the limit and cancels the rest", async () => {
    const { stream, seen } = countingStream(1000, 1024);
    const bytes = await readAtMost(stream);
    expect(bytes.length).toBe(READ_LIMIT_BYTES);
    expect(seen.pulled).toBeLessThanOrEqual(READ_LIMIT_BYTES / 1024 + 1);
    expect(seen.cancelled).toBe(true);
  });
  it("reads a short body to its end", async () => {
    const { stream, seen } = countingStream(2, 100);
    expect((await readAtMost(stream)).length).toBe(200);
    expect(seen.cancelled).toBe(false);
  });
});

describe("describeAnswerBody", () => {
  const answer = (body: BodyInit | null, headers: Record<string, string>) =>
    new Response(body, { status: 500, headers });

  it("gives a snippet of a text answer", async () => {
    expect(await describeAnswerBody(answer("upstream\nfailed", { "content-type": "text/plain" }))).toBe(
      "upstream failed",
    );
    expect(await describeAnswerBody(answer("", { "content-type": "text/plain" }))).toBe("");
  });
  it("gives only the size of a binary or unlabelled answer, and never reads a declared one", async () => {
    const { stream, seen } = countingStream(1000, 1024);
    expect(
      await describeAnswerBody({
        status: 500,
        headers: new Headers({ "content-type": "image/png", "content-length": "3072000" }),
        body: stream,
      }),
    ).toBe("(binary answer, 3 MiB)");
    expect(seen.pulled).toBe(0);
    expect(await describeAnswerBody(answer(new Uint8Array(3072), { "content-type": "application/octet-stream" }))).toBe(
      "(binary answer, 3 KiB)",
    );
    const endless = countingStream(10_000, 1024);
    expect(await describeAnswerBody({ status: 500, headers: new Headers(), body: endless.stream })).toBe(
      "(binary answer, 4 KiB or more)",
    );
    expect(endless.seen.cancelled).toBe(true);
  });
});
