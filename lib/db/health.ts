import type { Db } from "./client";

export async function checkHealth(db: Db): Promise<{ ok: true; db: "up"; database: "postgres" | "pglite" }> {
  await db.driver.query("SELECT 1");
  return { ok: true, db: "up", database: db.driver.kind };
}
