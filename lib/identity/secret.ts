import "server-only";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { env } from "../env";
import { processWide } from "../process-wide";

// The secret that signs session cookies. Production PostgreSQL deployments set
// SETTLE_AUTH_SECRET (every instance must share it). The embedded database
// keeps one next to its data, so sessions survive a restart with no setup.

const DEVELOPMENT_SECRET = "settle-development-secret-do-not-use-in-production";

export function authSecret(): string {
  const settings = env();
  if (settings.SETTLE_AUTH_SECRET) return settings.SETTLE_AUTH_SECRET;
  if (settings.DATABASE_URL) {
    if (settings.NODE_ENV === "production") {
      throw new Error(
        "SETTLE_AUTH_SECRET is not set. With DATABASE_URL in production it signs every session and must be the same on every instance: set it to 32+ random characters, e.g. SETTLE_AUTH_SECRET=$(openssl rand -base64 32).",
      );
    }
    return DEVELOPMENT_SECRET;
  }
  if (settings.SETTLE_DATA_DIR.startsWith("memory://"))
    return processWide("memorySecret", () => randomBytes(32).toString("base64url"));
  const file = path.join(path.dirname(path.resolve(settings.SETTLE_DATA_DIR)), "auth-secret");
  if (!existsSync(file)) {
    // Settle's folder: only this user may enter it (lib/db/private-dir.ts claims it when the database opens).
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600, flag: "wx" });
  }
  return readFileSync(file, "utf8").trim();
}
