import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { bodyStream } from "./node-body";

// The fast lane hands routes node's request through this stream: nothing may
// be read before the route asks (it authenticates first), and a route that
// stops early leaves the rest to be discarded.

describe("node's request body as a web stream", () => {
  it("reads nothing until a reader asks, then chunk by chunk, to the end", async () => {
    const source = new PassThrough();
    source.write("first ");
    const stream = bodyStream(source);
    await new Promise((r) => setTimeout(r, 20));
    expect(source.listenerCount("data")).toBe(0);
    expect(source.readableFlowing).not.toBe(true);

    const reader = stream.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("first ");
    source.end("second");
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("second");
    expect((await reader.read()).done).toBe(true);
    expect(source.listenerCount("data")).toBe(0);
  });

  it("reads no further ahead than the reader: paused between reads", async () => {
    const source = new PassThrough({ highWaterMark: 4 });
    const reader = bodyStream(source).getReader();
    source.write("aaaa");
    await reader.read();
    expect(source.isPaused()).toBe(true);
    source.write("bbbb");
    source.write("cccc");
    await new Promise((r) => setTimeout(r, 20));
    // Still waiting in node's buffer, not taken into the web stream.
    expect(source.readableLength).toBeGreaterThan(0);
    expect(Buffer.from((await reader.read()).value!).toString()).toMatch(/^b/);
  });

  it("a reader that stops early lets node discard the rest", async () => {
    const source = new PassThrough();
    const reader = bodyStream(source).getReader();
    source.write("x".repeat(100));
    await reader.read();
    await reader.cancel();
    expect(source.listenerCount("data")).toBe(0);
    expect(source.readableFlowing).toBe(true);
    source.end("y".repeat(100));
    await new Promise((r) => source.once("end", r));
  });

  it("a body that breaks off errors the read", async () => {
    const source = new PassThrough();
    const reader = bodyStream(source).getReader();
    source.write("partial");
    await reader.read();
    source.destroy(new Error("aborted"));
    await expect(reader.read()).rejects.toThrow("aborted");
  });
});

describe("a source that ended or broke before the route read", () => {
  it("reads as empty when it had ended, and fails when it was destroyed", async () => {
    const ended = new PassThrough();
    ended.end();
    ended.resume();
    await new Promise((r) => ended.once("end", r));
    expect((await bodyStream(ended).getReader().read()).done).toBe(true);

    const gone = new PassThrough();
    gone.destroy();
    await expect(bodyStream(gone).getReader().read()).rejects.toThrow("closed before its body ended");
  });
});
