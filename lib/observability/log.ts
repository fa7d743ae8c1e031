import pino, { type Logger } from "pino";
import { env } from "../env";
import { processWide } from "../process-wide";

// Settle's structured log: one JSON line per event on stdout (pino), for a
// log shipper to read. One per API request (lib/http/route.ts) and per
// background job run (lib/jobs/scheduler.ts). What goes in is chosen field by
// field — ids, routes, statuses, durations — never a header, a body or a key.

export const log: Logger = processWide("logger", () =>
  pino({
    level: env().SETTLE_LOG_LEVEL,
    base: { service: "settle" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }),
);
