import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { signatureHeader } from "./signature";
import { receiverRecipe, verifyRecipe } from "./verify-recipe";

type Verify = (rawBody: string, header: string | undefined, secret: string, toleranceS?: number) => boolean;

/** The recipe's function, compiled from its text as people copy it. */
function compileRecipe(): Verify {
  const source = verifyRecipe.replace(/^import .*$/m, "").replace("export function", "function");
  return new Function("createHmac", "timingSafeEqual", "Buffer", `${source}\nreturn verifySettleSignature;`)(
    createHmac,
    timingSafeEqual,
    Buffer,
  ) as Verify;
}

describe("the signature recipe in the API docs and the console", () => {
  const verify = compileRecipe();
  const secret = "whsec_recipe";
  const body = '{"id":"evt_7","type":"invocation.settled","data":{"decision":"do_not_retry"}}';

  it("accepts what Settle signs, and refuses a changed body, another secret, an old timestamp or no header", () => {
    const header = signatureHeader(secret, body, new Date());
    expect(verify(body, header, secret)).toBe(true);
    expect(verify(body.replace("do_not_retry", "retry_allowed"), header, secret)).toBe(false);
    expect(verify(body, header, "whsec_other")).toBe(false);
    expect(verify(body, signatureHeader(secret, body, new Date(Date.now() - 301_000)), secret)).toBe(false);
    expect(verify(body, undefined, secret)).toBe(false);
  });

  it("is quoted in docs/api.md word for word", () => {
    const readme = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    expect(readme).toContain(verifyRecipe);
    expect(readme).toContain(receiverRecipe);
  });
});
