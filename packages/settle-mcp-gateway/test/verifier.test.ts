import { describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.js";
import type { ToolCallParams } from "../src/forward.js";
import { answerWithProbe, hasProbes } from "../src/verifier.js";

// The gateway answers Settle's ask with its rule's probe: the probe's arguments filled from the ask, its boolean
// read as the finding; no probe, or a probe that cannot tell, is "could not tell".

const config = parseConfig(
  {
    tools: [
      {
        match: "create_order",
        effect: "create",
        probe: {
          tool: "get_order",
          arguments: { idempotency_key: "{{idempotency_key}}", customer: "{{args.customer}}" },
        },
      },
      { match: "charge_card", effect: "money" },
    ],
  },
  "test",
);

const ask = (tool: string) => ({
  id: "v1",
  invocation_id: "inv-1",
  task_id: "t1",
  tool,
  effect_class: "create" as const,
  idempotency_key: "k-1",
  arguments: { customer: "c-9" },
  first_dispatched_at: "2026-12-04T00:00:00.000Z",
  try: 1,
  max_tries: 3,
  lease_expires_at: "2026-12-04T00:10:00.000Z",
});

describe("the gateway as verifier", () => {
  it("runs the rule's probe with the ask's key and arguments and reads its boolean", async () => {
    const sent: ToolCallParams[] = [];
    const dispatch = async (params: ToolCallParams) => {
      sent.push(params);
      return { kind: "result" as const, result: { content: [], structuredContent: { found: true } } };
    };
    expect(await answerWithProbe({ config, dispatch }, ask("create_order"))).toEqual({
      found: true,
      evidence: "settle-mcp probe get_order: found = true",
    });
    expect(sent).toEqual([{ name: "get_order", arguments: { idempotency_key: "k-1", customer: "c-9" } }]);
  });

  it("a probe that cannot tell, or a tool without one, answers found: null with the reason", async () => {
    const dispatch = async () => ({ kind: "result" as const, result: { content: [{ type: "text", text: "maybe" }] } });
    expect(await answerWithProbe({ config, dispatch }, ask("create_order"))).toMatchObject({ found: null });
    expect(await answerWithProbe({ config, dispatch }, ask("charge_card"))).toEqual({
      found: null,
      evidence: "settle-mcp has no probe for charge_card",
    });
    expect(hasProbes(config)).toBe(true);
    expect(hasProbes(parseConfig({ tools: [{ match: "x", effect: "read" }] }, "test"))).toBe(false);
  });
});
