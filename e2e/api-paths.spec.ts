import http from "node:http";
import { expect, test } from "@playwright/test";
import { readState } from "./server";

// Addresses Next.js cannot decode, sent byte for byte (a browser or fetch would
// re-encode them): the API answers in Settle's error envelope, pages with a
// short 400, never the router's plain "Internal Server Error".

const state = readState().console;

function get(path: string): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(state.baseURL);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: "GET", path, headers: { authorization: `Bearer ${state.key}` } },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

for (const path of [
  "/api/v1/invocations/%E0%A4%A",
  "/api/v1/invocations/%",
  "/api/v1/tasks/%zz/timeline",
  "/api/%C0",
  "/api/v1/invocations/x%ZZ/decision",
]) {
  test(`${path} answers 400 in Settle's envelope`, async () => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(res.type).toContain("application/json");
    expect(JSON.parse(res.body)).toMatchObject({
      ok: false,
      code: "INVALID_REQUEST",
      category: "validation",
      commit_state: "not_committed",
    });
  });
}

test("a page address that does not decode is a 400, not a server error", async () => {
  const res = await get("/invocations/%E0%A4%A");
  expect(res.status).toBe(400);
  expect(res.body).toContain("not valid UTF-8");
});

test("NUL in an id is looked up as Settle stores it (U+FFFD): a typed 404, not a database error", async () => {
  const res = await get("/api/v1/invocations/a%00b");
  expect(res.status).toBe(404);
  expect(JSON.parse(res.body)).toMatchObject({ ok: false, code: "NOT_FOUND" });
});

test("a list cursor Settle did not hand out is a typed 400", async () => {
  const res = await get(
    `/api/v1/invocations?cursor=${Buffer.from("2026-01-01T00:00:00.000Z|not-a-uuid").toString("base64url")}`,
  );
  expect(res.status).toBe(400);
  expect(JSON.parse(res.body)).toMatchObject({ code: "INVALID_REQUEST" });
});
