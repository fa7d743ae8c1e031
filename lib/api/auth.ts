import type { Db } from "../db/client";
import { consoleIsOpen } from "../env";
import { lookupRuntimeKey, RUNTIME_KEY_PREFIX } from "../domain/runtime-keys";
import { ApiError } from "./errors";

// Who is calling. Runtime ingest keys now; operators' sessions and personal
// access tokens join this union with the console.

export type Principal = { kind: "runtime"; runtime: { id: string; name: string } };

export function bearerToken(req: Request): string | null {
  const header = req.headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

export async function authenticate(db: Db, req: Request): Promise<Principal> {
  const token = bearerToken(req);
  if (!token) {
    throw new ApiError("UNAUTHENTICATED", "Send `Authorization: Bearer <runtime ingest key>`. Create a key with `npm run -s settle -- keys create <runtime>`.");
  }
  if (!token.startsWith(RUNTIME_KEY_PREFIX)) {
    throw new ApiError("UNAUTHENTICATED", "That is not a Settle key: runtime ingest keys start with `stl_rk_`.");
  }
  const found = await lookupRuntimeKey(db, token);
  if (found.status === "revoked") throw new ApiError("KEY_REVOKED", "This runtime key was revoked. Ask an admin for a new one.");
  if (found.status === "unknown") throw new ApiError("UNAUTHENTICATED", "Unknown runtime key.");
  return { kind: "runtime", runtime: found.runtime };
}

export type ConsolePrincipal = { kind: "console" };

/** The read-only local view: open on the embedded database, or when SETTLE_OPEN_CONSOLE=1. */
export function authenticateConsole(): ConsolePrincipal {
  if (!consoleIsOpen()) {
    throw new ApiError("UNAUTHENTICATED", "This view is open only on the embedded database or with SETTLE_OPEN_CONSOLE=1; use the API with a key.");
  }
  return { kind: "console" };
}
