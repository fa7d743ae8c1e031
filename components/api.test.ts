import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { errorEnvelope } from "@/lib/errors";
import type { UserInfo } from "@/lib/identity/users";
import type { InvocationView } from "@/lib/invocations/read";
import { ApiClientError } from "@/lib/query/fetch";
import { api } from "./api";

// The console's client: what it sends for a typed call, what it answers, and
// what it refuses to compile.

type Sent = { url: string; init: RequestInit };

function answering(status: number, body: unknown): Sent[] {
  const sent: Sent[] = [];
  vi.stubGlobal("fetch", async (url: string, init: RequestInit) => {
    sent.push({ url, init });
    return new Response(body === undefined ? "" : JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });
  });
  return sent;
}

afterEach(() => vi.unstubAllGlobals());

describe("the console's API client", () => {
  it("fills in path parameters (encoded) and the query, sends the session cookie, and answers the body", async () => {
    const sent = answering(200, { invocation_id: "a/b c", runtime: "billing" });
    const signal = new AbortController().signal;
    const body = await api.get("/api/v1/invocations/{invocation_id}", {
      params: { invocation_id: "a/b c" },
      query: { runtime: "billing" },
      signal,
    });
    expect(body).toEqual({ invocation_id: "a/b c", runtime: "billing" });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe("/api/v1/invocations/a%2Fb%20c?runtime=billing");
    expect(sent[0]!.init).toMatchObject({ method: "GET", credentials: "same-origin", signal, body: undefined });
    expect(sent[0]!.init.headers).toEqual({ accept: "application/json" });
  });

  it("sends a JSON body with its media type, and leaves out query values that are undefined", async () => {
    const sent = answering(201, { id: "v1", name: "mine", query: "status=stalled" });
    await api.post("/api/v1/saved-views", { body: { name: "mine", query: "status=stalled" } });
    await api.get("/api/v1/audit", { query: { actor: "ana@example.com", limit: 50, cursor: undefined } });
    expect(sent[0]!.init).toMatchObject({
      method: "POST",
      body: JSON.stringify({ name: "mine", query: "status=stalled" }),
    });
    expect(sent[0]!.init.headers).toEqual({ accept: "application/json", "content-type": "application/json" });
    expect(sent[1]!.url).toBe("/api/v1/audit?actor=ana%40example.com&limit=50");
  });

  it("sends an integer past 2^53 (a BigInt, as the approve-with-edits dialog holds it) with every digit", async () => {
    const sent = answering(200, {});
    await api.post("/api/v1/invocations/{invocation_id}/actions", {
      params: { invocation_id: "i1" },
      body: {
        action: "approve",
        arguments: { order: 12345678901234567891n, lines: [{ sku: -18446744073709551617n, qty: 2 }] },
        version: 3,
      },
    });
    expect(sent[0]!.init.body).toBe(
      '{"action":"approve","arguments":{"order":12345678901234567891,"lines":[{"sku":-18446744073709551617,"qty":2}]},"version":3}',
    );
  });

  it("throws ApiClientError carrying Settle's error envelope, whose message is the envelope's", async () => {
    answering(409, errorEnvelope("USER_EXISTS", "ana@example.com already has an account.", "req_1"));
    const error = await api
      .post("/api/v1/admin/users", { body: { email: "ana@example.com", role: "viewer" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiClientError);
    expect(error).toMatchObject({
      status: 409,
      code: "USER_EXISTS",
      message: "ana@example.com already has an account.",
    });
  });

  it("throws ApiClientError with the status when the answer is no envelope", async () => {
    answering(502, undefined);
    const error = await api.get("/api/v1/admin/users").catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: "HTTP_502", envelope: null, message: "HTTP 502" });
  });

  it("types each call from the route's declaration", () => {
    expectTypeOf(api.get<"/api/v1/admin/users">).returns.resolves.toEqualTypeOf<{ items: UserInfo[] }>();
    expectTypeOf(api.get<"/api/v1/invocations/{invocation_id}">).returns.resolves.toEqualTypeOf<InvocationView>();
  });
});

// Never called: each line below must fail typecheck (`npx tsc --noEmit -p .`), or its @ts-expect-error does.
export function refusedCalls() {
  // @ts-expect-error a path no route serves
  void api.get("/api/v1/admin/user");
  // @ts-expect-error a path that does not serve this method
  void api.post("/api/v1/admin/users/{user_id}", { params: { user_id: "u1" }, body: { active: false } });
  // @ts-expect-error its path parameter is missing
  void api.patch("/api/v1/admin/users/{user_id}", { body: { active: false } });
  // @ts-expect-error a path parameter under another name
  void api.patch("/api/v1/admin/users/{user_id}", { params: { id: "u1" }, body: { active: false } });
  // @ts-expect-error a role that does not exist
  void api.patch("/api/v1/admin/users/{user_id}", { params: { user_id: "u1" }, body: { role: "owner" } });
  // @ts-expect-error the body its route requires is missing
  void api.post("/api/v1/saved-views");
  void api.get("/api/v1/invocations/{invocation_id}", {
    params: { invocation_id: "i1" },
    // @ts-expect-error a query parameter the route does not take
    query: { runtimes: "billing" },
  });
  void api.get("/api/v1/admin/webhooks/{endpoint_id}/deliveries", {
    params: { endpoint_id: "e1" },
    // @ts-expect-error a delivery status that does not exist
    query: { status: "lost" },
  });
}
