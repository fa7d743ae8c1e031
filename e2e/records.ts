import { randomBytes } from "node:crypto";
import { expect, type APIRequestContext } from "@playwright/test";

/**
 * Sends one committed create_invoice call (a fresh invocation id) with the runtime key `key`, as a runtime would,
 * and checks Settle took it (207). Returns the invocation id.
 */
export async function sendCommittedCall(request: APIRequestContext, base: string, key: string): Promise<string> {
  const id = `inv-${randomBytes(4).toString("hex")}`;
  const sent = await request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${key}` },
    data: {
      event_id: `${id}-o1`,
      task_id: `task-${id}`,
      invocation_id: id,
      tool: "create_invoice",
      effect_class: "create",
      envelope: { outcome: "ok", effect_applied: "yes" },
    },
  });
  expect(sent.status()).toBe(207);
  return id;
}
