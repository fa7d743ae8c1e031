import { createSettleClient } from "@settle/client";

// The verifier of bench:verify's runtime, in a process of its own as a real runtime's worker would be: the bench's
// own process sends the load, and an event loop shared with these workers would slow the senders, not Settle.
// Settings come from the bench (argv as JSON); prints "answered N" when it stops (SIGTERM).

const { url, key, workers, concurrency, answerMs } = JSON.parse(process.argv[2]!) as {
  url: string;
  key: string;
  workers: number;
  concurrency: number;
  answerMs: number;
};
const stop = new AbortController();
let answered = 0;
const running = Array.from({ length: workers }, (_, w) => {
  const client = createSettleClient({ url, key });
  client.verifier("create_refund", async (item) => {
    await new Promise((r) => setTimeout(r, answerMs));
    return { found: true, evidence: `refund for ${item.idempotency_key}`, ref: `re_${item.invocation_id}` };
  });
  return client.serveVerifications({
    signal: stop.signal,
    waitS: 5,
    concurrency,
    worker: `bench-${w}`,
    log: (e) => {
      if (e.kind === "answered") answered += 1;
    },
  });
});
process.once("SIGTERM", () => stop.abort());
await Promise.allSettled(running);
process.stdout.write(`answered ${answered}\n`);
