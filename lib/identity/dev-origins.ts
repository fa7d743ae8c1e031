import { networkInterfaces } from "node:os";

// `next dev` serves its scripts only to pages opened at localhost unless
// allowedDevOrigins names the host: opened at 127.0.0.1 or at the "Network"
// address it prints, the sign-in page never hydrated and its form fell back
// to the browser's own submit. These are the addresses this machine answers on.

/** Loopback names and every address of this machine's network interfaces, as hosts Next.js compares against. */
export function devOrigins(publicUrl?: string): string[] {
  const hosts = new Set(["localhost", "127.0.0.1", "[::1]"]);
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      hosts.add(address.family === "IPv6" ? `[${address.address.split("%")[0]}]` : address.address);
    }
  }
  if (publicUrl && URL.canParse(publicUrl)) hosts.add(new URL(publicUrl).hostname);
  return [...hosts];
}

/**
 * In `next dev` without SETTLE_PUBLIC_URL, the origins Settle's own pages may have: every host above at
 * the port it listens on. (Route handlers there see a URL at localhost whatever the page was opened at.)
 */
export function devPageOrigins(settings: { NODE_ENV: string; SETTLE_PUBLIC_URL?: string; PORT: number }): string[] {
  if (settings.SETTLE_PUBLIC_URL || settings.NODE_ENV !== "development") return [];
  return devOrigins().map((host) => `http://${host}:${settings.PORT}`);
}
