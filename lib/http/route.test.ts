import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ApiError } from "../errors";
import { toErrorResponse } from "./route";

describe("every failure becomes Settle's error envelope", () => {
  it("an unexpected error is a 500 INTERNAL envelope without a stack trace", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    const res = toErrorResponse(new Error("secret internals at /srv/app/lib/x.ts:12"), "req_1");
    spy.mockRestore();
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const body = await res.json();
    expect(body).toMatchObject({
      ok: false,
      code: "INTERNAL",
      category: "internal",
      commit_state: "unknown",
      next_action: "wait_and_retry",
      operation_ref: "req_1",
      retry: { directive: "after_delay", not_before: expect.any(String) },
    });
    expect(JSON.stringify(body)).not.toMatch(/secret internals|\.ts:\d+/);
  });

  it("a database that cannot be reached is a 503 with a time to retry", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const res = toErrorResponse(new Error("driver failed", { cause: refused }), "req_2");
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      code: "DATABASE_UNAVAILABLE",
      commit_state: "not_committed",
      retry: { directive: "after_delay" },
    });
  });

  it("a zod failure is a 400 naming the field", async () => {
    const parsed = z.object({ limit: z.number() }).safeParse({ limit: "x" });
    const res = toErrorResponse(parsed.error, "req_3");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "INVALID_REQUEST", safe_details: { issues: [{ path: "limit" }] } });
  });

  it("an ApiError keeps its code and status", async () => {
    const res = toErrorResponse(new ApiError("TOO_MANY_RECORDS", "501 records", { limit_records: 500 }), "req_4");
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "TOO_MANY_RECORDS", safe_details: { limit_records: 500 } });
  });
});
