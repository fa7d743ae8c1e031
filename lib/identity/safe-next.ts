// Where to go after sign-in: a page of this site, never another one. The
// value is resolved the way a browser would resolve it (`/\evil.example`,
// `/%09/evil.example` and `//evil.example` all leave the site), and kept only
// when it lands on the same origin; anything else is "/".

const BASE = "https://settle.invalid";

export function safeNext(value: string | string[] | undefined | null): string {
  const next = Array.isArray(value) ? value[0] : value;
  if (!next) return "/";
  try {
    const target = new URL(next, BASE);
    // A browser strips tabs and newlines from a URL before resolving it; a second resolve sees what it would.
    const again = new URL(target.pathname + target.search + target.hash, BASE);
    if (
      target.origin !== BASE ||
      again.origin !== BASE ||
      !next.startsWith("/") ||
      /[\\\u0000-\u001f]/.test(decodeURIComponent(target.pathname))
    )
      return "/";
    return target.pathname + target.search + target.hash;
  } catch {
    return "/";
  }
}
