import type { Readable } from "node:stream";

/**
 * node's request body as a web stream that reads nothing until the route asks:
 * withRoute authenticates first, so a request without a valid key is answered
 * before a byte of its body is read, however slowly it arrives. The route's
 * bounded reader (lib/http/read-body.ts) pulls chunk by chunk, and when it
 * stops early (a body over its limit) node discards the rest.
 */
export function bodyStream(source: Readable): ReadableStream<Uint8Array> {
  let stop: (() => void) | null = null;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!stop) {
          // Read, or gone, before anyone asked (a test's copy, a client that left): nothing more will be emitted.
          if (source.readableEnded) return controller.close();
          if (source.destroyed) return controller.error(closedEarly());
          stop = forward(source, controller);
        }
        source.resume();
      },
      cancel() {
        stop?.();
        // Flowing with no listener: node reads the rest off the wire and drops it, and the connection stays usable.
        source.resume();
      },
    },
    // No pull, so nothing read, until the route reads.
    { highWaterMark: 0 },
  );
}

const closedEarly = () => new Error("the request was closed before its body ended");

/** Passes the source's chunks, end and failure on to the stream; returns what stops it. */
function forward(source: Readable, controller: ReadableStreamDefaultController<Uint8Array>): () => void {
  const onData = (chunk: Buffer) => {
    controller.enqueue(chunk);
    // Read no further ahead than the route reads.
    if ((controller.desiredSize ?? 0) <= 0) source.pause();
  };
  const finish = (error?: Error) => {
    stop();
    if (error) controller.error(error);
    else controller.close();
  };
  const onEnd = () => finish();
  const onError = (error: Error) => finish(error);
  const onClose = () => finish(closedEarly());
  const stop = () => {
    source.off("data", onData);
    source.off("end", onEnd);
    source.off("error", onError);
    source.off("close", onClose);
  };
  source.on("data", onData);
  source.on("end", onEnd);
  source.on("error", onError);
  source.on("close", onClose);
  return stop;
}
