import { createHash, timingSafeEqual } from "node:crypto";
import type { Db } from "../db/client";
import { env } from "../env";
import { ApiError } from "../errors";
import { renderMetrics } from "./metrics";

const digest = (text: string) => createHash("sha256").update(text).digest();

/** GET /metrics: the exposition for a scraper that shows SETTLE_METRICS_TOKEN; off (404) while none is set. */
export async function scrapeMetrics(db: Db, authorization: string | null): Promise<Response> {
  const token = env().SETTLE_METRICS_TOKEN;
  if (!token) throw new ApiError("NOT_FOUND", "Metrics are off: set SETTLE_METRICS_TOKEN to serve them at /metrics.");
  const given = /^Bearer (.+)$/.exec(authorization ?? "")?.[1] ?? "";
  // Compared as digests, in constant time: neither the token nor its length leaks through timing.
  if (!timingSafeEqual(digest(given), digest(token)))
    throw new ApiError("UNAUTHENTICATED", "Send the metrics token: Authorization: Bearer <SETTLE_METRICS_TOKEN>.");
  const { body, contentType } = await renderMetrics(db);
  return new Response(body, { status: 200, headers: { "content-type": contentType } });
}
