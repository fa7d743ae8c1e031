import { describe, expect, it } from "vitest";
import { probeArguments, readFinding } from "../src/probe.js";

// A probe is a read the configuration names; its arguments are filled from
// the call, and only a boolean it states counts as a finding.

const probe = {
  tool: "get_order",
  arguments: { idempotency_key: "{{idempotency_key}}", customer: "{{args.customer.id}}", ref: "inv {{invocation_id}}" },
  found: "found",
};

describe("probes", () => {
  it("fill the key, the invocation and the call's own arguments (whole values keep their type)", () => {
    expect(
      probeArguments(
        { ...probe, arguments: { ...probe.arguments, items: "{{args.items}}" } },
        { idempotencyKey: "k-1", invocationId: "t:k-1", args: { customer: { id: "c-9" }, items: [1, 2] } },
      ),
    ).toEqual({
      idempotency_key: "k-1",
      customer: "c-9",
      ref: "inv t:k-1",
      items: [1, 2],
    });
  });

  it("find only what the probe states as a boolean; anything else is inconclusive", () => {
    expect(readFinding(probe, { kind: "result", result: { content: [], structuredContent: { found: true } } })).toEqual(
      { found: true },
    );
    expect(
      readFinding(probe, { kind: "result", result: { content: [], structuredContent: { found: false } } }),
    ).toEqual({ found: false });
    expect(
      readFinding(probe, { kind: "result", result: { content: [{ type: "text", text: "found it" }] } }),
    ).toHaveProperty("failed");
    expect(
      readFinding(probe, {
        kind: "result",
        result: { content: [], isError: true, structuredContent: { found: false } },
      }),
    ).toHaveProperty("failed");
    expect(readFinding(probe, { kind: "lost", why: "crashed", detail: "" })).toHaveProperty("failed");
    // A server that could not be asked measured nothing: no probe record at all.
    expect(readFinding(probe, { kind: "not_sent", detail: "ECONNREFUSED" })).toEqual({ unreached: "ECONNREFUSED" });
  });
});
