import { describe, expect, it } from "vitest";
import { identify } from "../src/identity.js";
import { attemptRecord, type AttemptRef } from "../src/records.js";

// The gateway sends what the call was, as every client does: Settle redacts the arguments, shows them on the
// invocation page and summarises the call. A tool's rule keeps them in the gateway with send_arguments: false.

const at = new Date("2026-12-07T10:00:00.000Z");
const refOf = (id: ReturnType<typeof identify>): AttemptRef => ({
  taskId: id.taskId,
  invocationId: "inv-1",
  attempt: 1,
  tool: "create_order",
  idempotencyKey: id.idempotencyKey,
  effect: "create",
  argsDigest: id.argsDigest,
  arguments: id.arguments,
});

describe("the gateway's records carry the call's arguments", () => {
  it("by default, without the key argument the gateway sets itself; a tool's rule can turn it off", () => {
    const rule = { match: "create_order", idempotency_arg: "idempotency_key" };
    const sent = identify("create_order", { customer: "cus_7", idempotency_key: "minted" }, "t", rule);
    expect(sent.arguments).toEqual({ customer: "cus_7" });
    const record = attemptRecord(refOf(sent), "intent", undefined, at);
    expect(record.arguments).toEqual({ customer: "cus_7" });
    // Settle digests the arguments it is sent: one digest for every record of the call.
    expect(record.args_digest).toBeUndefined();

    const kept = identify("create_order", { customer: "cus_7" }, "t", { match: "create_order", send_arguments: false });
    expect(kept.arguments).toBeNull();
    const quiet = attemptRecord(refOf(kept), "outcome", { ok: true }, at);
    expect(quiet.arguments).toBeUndefined();
    expect(quiet.args_digest).toBe(kept.argsDigest);
  });

  it("sends only the digest for arguments too large for Settle to store, or none at all", () => {
    expect(identify("t", { blob: "x".repeat(70_000) }, "t", null).arguments).toBeNull();
    expect(identify("t", {}, "t", null).arguments).toBeNull();
  });
});
