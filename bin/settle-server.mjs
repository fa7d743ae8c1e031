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
  console.error(`settle: the port must be a number from 0 (any free port) to 65535, not "${values.port ?? process.env.PORT}".`);
  process.exit(2);
}

// Tells the app that x-settle-socket-address comes from here; under plain `next start` it is ignored.
globalThis.__settleServer = true;
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
for (let waited = 0; !globalThis.__settleStartup && waited < 30_000; waited += 25) await new Promise((r) => setTimeout(r, 25));
await globalThis.__settleStartup;

// The runtime's hot routes (guard, ingest, decision) go straight to their handlers, which
// instrumentation.ts put on globalThis; everything else through Next.js. SETTLE_FAST_LANE=off sends
// every request through Next.js (docs/decisions/024-fast-lane.md).
const fastLane = process.env.SETTLE_FAST_LANE === "off" ? null : (globalThis.__settleFastLane ?? null);
if (process.env.SETTLE_FAST_LANE !== "off" && !fastLane) console.warn("settle: the fast lane is not registered (instrumentation.ts did not run); every request goes through Next.js.");

const server = createServer((req, res) => {
  req.headers["x-settle-socket-address"] = req.socket.remoteAddress ?? "";
  if (fastLane?.(req, res)) return;
  handle(req, res);
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
