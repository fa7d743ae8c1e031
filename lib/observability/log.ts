import pino, { type Logger } from "pino";
import { env } from "../env";
import { processWide } from "../process-wide";

// Settle's structured log: one JSON line per event on stdout (pino), for a
// log shipper to read. One per API request (lib/http/route.ts) and per
// background job run (lib/jobs/scheduler.ts). What goes in is chosen field by
// field — ids, routes, statuses, durations — never a header, a body or a key.

/** Read when the logger is made, as modules load: settings that do not parse are start-up's to report, not this import's. */
function level(): string {
  try {
    return env().SETTLE_LOG_LEVEL;
  } catch {
    return "info";
  }
}

export const log: Logger = processWide("logger", () =>
  pino({
    level: level(),
    base: { service: "settle" },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  }),
);
