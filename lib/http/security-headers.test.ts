import { describe, expect, it } from "vitest";
import {
  API_CONTENT_SECURITY_POLICY,
  SECURITY_HEADERS,
  STRICT_TRANSPORT_SECURITY,
  contentSecurityPolicy,
  newNonce,
} from "./security-headers";

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  );
}

describe("contentSecurityPolicy", () => {
  it("is the strict nonce policy, one directive each", () => {
    expect(contentSecurityPolicy("bm9uY2U=")).toBe(
      "default-src 'self'; script-src 'self' 'nonce-bm9uY2U=' 'strict-dynamic'; style-src 'self' 'nonce-bm9uY2U='; style-src-attr 'unsafe-inline'; " +
        "img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
  });

  it("never lets inline or evaluated script run in production", () => {
    const script = directives(contentSecurityPolicy("abc")).get("script-src")!;
    expect(script).not.toContain("'unsafe-inline'");
    expect(script).not.toContain("'unsafe-eval'");
    expect(directives(contentSecurityPolicy("abc")).get("style-src")).not.toContain("'unsafe-inline'");
  });

  it("in development only: 'unsafe-eval' for scripts, inline <style> for the dev overlay", () => {
    const dev = directives(contentSecurityPolicy("abc", { dev: true }));
    expect(dev.get("script-src")).toEqual(["'self'", "'nonce-abc'", "'strict-dynamic'", "'unsafe-eval'"]);
    expect(dev.get("style-src")).toEqual(["'self'", "'unsafe-inline'"]);
    const prod = directives(contentSecurityPolicy("abc", { dev: false }));
    expect(prod.get("script-src")).toEqual(["'self'", "'nonce-abc'", "'strict-dynamic'"]);
    expect(prod.get("style-src")).toEqual(["'self'", "'nonce-abc'"]);
    // Everything else is the same in both.
    for (const name of prod.keys())
      if (name !== "script-src" && name !== "style-src") expect(dev.get(name), name).toEqual(prod.get(name));
  });

  it("refuses a nonce that could break out of the header", () => {
    expect(() => contentSecurityPolicy("abc'; script-src *")).toThrow(/base64/);
    expect(() => contentSecurityPolicy("")).toThrow(/base64/);
  });
});

describe("newNonce", () => {
  it("is 128 bits of base64, different every time, and accepted by the policy", () => {
    const a = newNonce();
    const b = newNonce();
    expect(a).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(a).not.toBe(b);
    expect(contentSecurityPolicy(a)).toContain(`'nonce-${a}'`);
  });
});

describe("static headers", () => {
  it("forbid framing, sniffing and powerful features; the API may load nothing", () => {
    expect(Object.fromEntries(SECURITY_HEADERS.map((h) => [h.key, h.value]))).toEqual({
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "strict-origin-when-cross-origin",
      "X-Frame-Options": "DENY",
      "Cross-Origin-Opener-Policy": "same-origin",
      "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    });
    expect(API_CONTENT_SECURITY_POLICY).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(STRICT_TRANSPORT_SECURITY.value).toBe("max-age=31536000; includeSubDomains");
  });
});
