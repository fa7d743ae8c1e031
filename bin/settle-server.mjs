#!/usr/bin/env node
// `npm start`: the production server. It is `next start` plus one fact Next.js
// does not pass on: the address of the TCP peer. Every request gets it in
// x-settle-socket-address, overwriting whatever a client sent under that name;
// lib/identity/client-ip.ts then believes X-Forwarded-For only from the proxies in
// SETTLE_TRUSTED_PROXIES. See docs/decisions/013-client-address.md.
//
//   node bin/settle-server.mjs [-p PORT] [-H HOSTNAME]     (PORT and HOSTNAME from the environment otherwise)
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { port: { type: "string", short: "p" }, hostname: { type: "string", short: "H" } },
  allowPositionals: false,
});
const port = Number(values.port ?? process.env.PORT ?? 3000);
const hostname = values.hostname ?? process.env.HOSTNAME ?? "0.0.0.0";
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(
    `settle: the port must be a number from 0 (any free port) to 65535, not "${values.port ?? process.env.PORT}".`,
  );
  process.exit(2);
}

// The app reads its port from the environment (its address in links, noted for the CLI): the one given here.
// Port 0 (any free port) is known only once listening, and the settings take no port 0: left as it was.
if (port > 0) process.env.PORT = String(port);

// What this script and the app share, under the names lib/process-wide.ts gives them: the app
// reads serverScript (x-settle-socket-address comes from here; under plain `next start` it is
// ignored), and instrumentation.ts registers startup, fastLane and serverLimits for this script.
const shared = (globalThis.__settle ??= {});
shared.serverScript = true;
// As `next start` does: the production build runs as production.
process.env.NODE_ENV ??= "production";
const { default: next } = await import("next");

const app = next({ dev: false, hostname, port, dir: process.cwd() });
try {
  await app.prepare();
} catch (error) {
  // lib/server-start.ts prints what is wrong with the settings; anything else, as it came.
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
const handle = app.getRequestHandler();
// instrumentation.ts checks the settings and opens the database once Next.js has loaded it: listen only after that.
for (let waited = 0; !shared.startup && waited < 30_000; waited += 25) await new Promise((r) => setTimeout(r, 25));
await shared.startup;

// The runtime's hot routes (guard, ingest, decision) go straight to their handlers, which
// instrumentation.ts put on globalThis; everything else through Next.js. SETTLE_FAST_LANE=off sends
// every request through Next.js (docs/decisions/024-fast-lane.md).
const fastLane = process.env.SETTLE_FAST_LANE === "off" ? null : (shared.fastLane ?? null);
if (process.env.SETTLE_FAST_LANE !== "off" && !fastLane)
  console.warn(
    "settle: the fast lane is not registered (instrumentation.ts did not run); every request goes through Next.js.",
  );

// Against clients that hold connections open (docs/decisions/025-server-limits.md): a request must
// arrive whole within SETTLE_REQUEST_TIMEOUT_S and its headers within SETTLE_HEADERS_TIMEOUT_S (checked
// every second, not node's every 30 s), and at most SETTLE_MAX_CONNECTIONS are open at once. Answers
// are not timed: a long-polled decision is held after its request arrived. The figures come from
// lib/env.ts through instrumentation.ts; without it, these are its defaults.
const limits = shared.serverLimits?.() ?? { requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, maxConnections: 1000 };
const serverOptions = {
  requestTimeout: limits.requestTimeoutMs,
  headersTimeout: limits.headersTimeoutMs,
  connectionsCheckingInterval: 1_000,
};
// An answer given before its request's body ended (a 413, a 401 to a key-less POST, a 415) says
// `Connection: close`, and the connection closes once the answer is out: what is left of the body is
// still on the wire, so the connection cannot carry another request, and a pooling client told
// "keep-alive" would send its next request into it and have it reset, with no answer at all.
// An answer given after the whole body arrived keeps its connection. Closed at once, with the client
// still sending, the kernel answers the unread bytes with a reset that can reach the client before it
// read the answer, which it then never sees. So the connection lingers, as nginx does: the answer and a
// FIN go out, and what still arrives is read and dropped for up to 2 s or 8 MiB.
function closeAfterEarlyAnswer(req, res) {
  // node writes the head through writeHead, also when a handler only calls end(): the one moment to decide.
  const writeHead = res.writeHead;
  res.writeHead = function (...args) {
    if (!req.complete && !res.headersSent) res.setHeader("Connection", "close");
    return writeHead.apply(this, args);
  };
  res.once("finish", () => {
    const socket = req.socket;
    if (req.complete || !socket || socket.destroyed) return;
    // node's destroySoon() destroys on the socket's "finish"; the timer or the drained bytes do instead.
    socket.removeListener("finish", socket.destroy);
    const stop = () => socket.destroy();
    const timer = setTimeout(stop, 2_000);
    timer.unref();
    let drained = 0;
    socket.on("data", (chunk) => {
      drained += chunk.length;
      if (drained > 8 * 1024 * 1024) stop();
    });
    socket.once("close", () => clearTimeout(timer));
    socket.resume();
  });
}

const server = createServer(serverOptions, (req, res) => {
  req.headers["x-settle-socket-address"] = req.socket.remoteAddress ?? "";
  closeAfterEarlyAnswer(req, res);
  if (fastLane?.(req, res)) return;
  handle(req, res);
});
server.maxConnections = limits.maxConnections;
// node closes a connection over the cap as it arrives; said once a minute at most, with how many.
let dropped = 0;
let droppedSince = 0;
server.on("drop", () => {
  dropped += 1;
  if (Date.now() - droppedSince < 60_000) return;
  console.warn(
    `settle: ${dropped} connection${dropped === 1 ? "" : "s"} refused: ${limits.maxConnections} are open (SETTLE_MAX_CONNECTIONS).`,
  );
  dropped = 0;
  droppedSince = Date.now();
});
server.on("error", (error) => {
  console.error(`settle: cannot listen on ${hostname}:${port}: ${error.message}`);
  process.exit(1);
});
server.listen(port, hostname, () => {
  console.log(`▲ Settle ready on http://${hostname === "0.0.0.0" ? "localhost" : hostname}:${port}`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 5_000).unref();
  });
}
