import { afterEach, describe, expect, it } from "vitest";
import { env, setEnv } from "@/lib/env";
import { serverLimits } from "./server-limits";

const keys = ["SETTLE_REQUEST_TIMEOUT_S", "SETTLE_HEADERS_TIMEOUT_S", "SETTLE_MAX_CONNECTIONS"] as const;

describe("npm start's timeouts and connection cap, from Settle's settings", () => {
  afterEach(() => setEnv(Object.fromEntries(keys.map((k) => [k, undefined]))));

  it("default to 30 s for a whole request, 10 s for its headers and 1000 connections", () => {
    setEnv(Object.fromEntries(keys.map((k) => [k, undefined])));
    expect(serverLimits()).toEqual({ requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, maxConnections: 1000 });
  });

  it("are read from the environment", () => {
    setEnv({ SETTLE_REQUEST_TIMEOUT_S: "120", SETTLE_HEADERS_TIMEOUT_S: "5", SETTLE_MAX_CONNECTIONS: "64" });
    expect(serverLimits()).toEqual({ requestTimeoutMs: 120_000, headersTimeoutMs: 5_000, maxConnections: 64 });
  });

  it("refuse headers that may take longer than the whole request, and nonsense", () => {
    setEnv({ SETTLE_REQUEST_TIMEOUT_S: "5", SETTLE_HEADERS_TIMEOUT_S: "10" });
    expect(() => env()).toThrow(/SETTLE_HEADERS_TIMEOUT_S: must be at most SETTLE_REQUEST_TIMEOUT_S \(5\)/);
    setEnv({ SETTLE_REQUEST_TIMEOUT_S: undefined, SETTLE_HEADERS_TIMEOUT_S: undefined, SETTLE_MAX_CONNECTIONS: "0" });
    expect(() => env()).toThrow(/SETTLE_MAX_CONNECTIONS/);
  });
});
