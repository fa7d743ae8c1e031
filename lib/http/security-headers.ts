// The one home for Settle's security headers. next.config.ts sends the static
// ones with every response (pages, API, static files); proxy.ts sends the
// per-request page CSP (with a fresh nonce) and HSTS. No imports: next.config.ts
// loads this file before the app is built.

export type Header = { key: string; value: string };

/** On every response. */
export const SECURITY_HEADERS: readonly Header[] = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  // Not no-referrer: under it the browser sends `Origin: null` on same-origin POSTs, which sign-in's origin check refuses.
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  // For browsers without CSP frame-ancestors; the page CSP says the same.
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
];

/** API responses are data, never documents: nothing may load from them, nothing may frame them. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** Sent only on responses served over https (a browser ignores it over http anyway). */
export const STRICT_TRANSPORT_SECURITY: Header = {
  key: "Strict-Transport-Security",
  value: "max-age=31536000; includeSubDomains",
};

/**
 * Whether an answer carries HSTS: served over https, by the request's own protocol (X-Forwarded-Proto,
 * which a client can send, does not change it) or because Settle's public address is https (behind a
 * proxy that ends TLS). proxy.ts and the fast lane both ask this.
 */
export function needsTransportSecurity(requestIsHttps: boolean, publicUrl: string): boolean {
  return requestIsHttps || publicUrl.startsWith("https:");
}

/** A fresh, unguessable nonce (128 random bits, base64). One per page request. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

/**
 * The page CSP. Scripts run only with the request's nonce (Next.js puts it on
 * its own scripts when it finds it in the request's CSP) or when loaded by
 * such a script ('strict-dynamic'). `<style>` elements need the nonce too.
 *
 * style-src-attr 'unsafe-inline': server-rendered `style="…"` attributes
 * (the timeline charts position every bar and mark with one, recharts sizes
 * its SVG with them, Next.js's built-in error pages use them) cannot carry a
 * nonce; without it they are dropped and the page renders broken. It allows
 * style attributes only, not `<style>` elements or any script.
 *
 * In development (only): React evaluates server error stacks with eval, so
 * 'unsafe-eval'; and Next.js's dev overlay adds <style> elements it cannot
 * give the nonce, so style-src is 'self' 'unsafe-inline' (a nonce beside
 * 'unsafe-inline' would switch 'unsafe-inline' off), as Next.js's guide does.
 */
export function contentSecurityPolicy(nonce: string, { dev = false }: { dev?: boolean } = {}): string {
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(nonce)) throw new Error("a CSP nonce is base64 characters only");
  const directives: [string, ...string[]][] = [
    ["default-src", "'self'"],
    ["script-src", "'self'", `'nonce-${nonce}'`, "'strict-dynamic'", ...(dev ? ["'unsafe-eval'"] : [])],
    ["style-src", "'self'", dev ? "'unsafe-inline'" : `'nonce-${nonce}'`],
    ["style-src-attr", "'unsafe-inline'"],
    ["img-src", "'self'", "data:", "blob:"],
    ["font-src", "'self'"],
    ["connect-src", "'self'"],
    ["object-src", "'none'"],
    ["base-uri", "'none'"],
    ["form-action", "'self'"],
    ["frame-ancestors", "'none'"],
  ];
  return directives.map((d) => d.join(" ")).join("; ");
}
