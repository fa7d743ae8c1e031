import "server-only";
import { env } from "@/lib/env";
import { processWide } from "@/lib/process-wide";

// What bin/settle-server.mjs needs from Settle's settings to guard its
// connections (docs/decisions/025-server-limits.md). The script is plain
// JavaScript outside the build, and only lib/env.ts reads the environment:
// instrumentation.ts registers this (lib/process-wide.ts), where the script finds it once
// start-up has checked the settings.

export type ServerLimits = { requestTimeoutMs: number; headersTimeoutMs: number; maxConnections: number };

export function serverLimits(): ServerLimits {
  const e = env();
  return {
    requestTimeoutMs: e.SETTLE_REQUEST_TIMEOUT_S * 1000,
    headersTimeoutMs: e.SETTLE_HEADERS_TIMEOUT_S * 1000,
    maxConnections: e.SETTLE_MAX_CONNECTIONS,
  };
}

/** Called by instrumentation.ts; bin/settle-server.mjs calls it (as `serverLimits`) after start-up, when the settings are known to be valid. */
export function registerServerLimits(): void {
  processWide("serverLimits", () => serverLimits);
}
