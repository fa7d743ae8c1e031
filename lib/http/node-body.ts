import type { Readable } from "node:stream";

/**
 * node's request body as a web stream that reads nothing until the route asks:
 * withRoute authenticates first, so a request without a valid key is answered
 * before a byte of its body is read, however slowly it arrives. The route's
 * bounded reader (lib/http/read-body.ts) pulls chunk by chunk, and when it
 * stops early (a body over its limit) node discards the rest.
 */
export function bodyStream(source: Readable): ReadableStream<Uint8Array> {
  let listening = false;
  let onData: (chunk: Buffer) => void = () => undefined;
  const stop = () => {
    source.off("data", onData);
    source.off("end", onEnd);
    source.off("error", onError);
    source.off("close", onClose);
  };
  let onEnd = () => stop();
  let onError = (_error: Error) => stop();
  let onClose = () => stop();
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!listening) {
          listening = true;
          onData = (chunk) => {
            controller.enqueue(chunk);
            // Read no further ahead than the route reads.
            if ((controller.desiredSize ?? 0) <= 0) source.pause();
          };
          onEnd = () => {
            stop();
            controller.close();
          };
          onError = (error) => {
            stop();
            controller.error(error);
          };
          onClose = () => onError(new Error("the request was closed before its body ended"));
          source.on("data", onData);
          source.on("end", onEnd);
          source.on("error", onError);
          source.on("close", onClose);
        }
        source.resume();
      },
      cancel() {
        stop();
        // Flowing with no listener: node reads the rest off the wire and drops it, and the connection stays usable.
        source.resume();
      },
    },
    // No pull, so nothing read, until the route reads.
    { highWaterMark: 0 },
  );
}
