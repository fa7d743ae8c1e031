import type { NextConfig } from "next";
import { devOrigins } from "./lib/identity/dev-origins";
import { API_CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from "./lib/http/security-headers";

const nextConfig: NextConfig = {
  // Lets engineers build side by side on one machine (each into its own folder).
  distDir: process.env.SETTLE_NEXT_DIST_DIR || ".next",
  // PGlite ships its own wasm and data files; bundling them breaks their lookup.
  serverExternalPackages: [
    "@electric-sql/pglite",
    "@electric-sql/pglite-socket",
    "pglite-prisma-adapter",
    "pino",
    "prom-client",
  ],
  poweredByHeader: false,
  // `next dev` opened at 127.0.0.1 or the LAN address it prints (not only localhost) must still load its scripts.
  allowedDevOrigins: devOrigins(process.env.SETTLE_PUBLIC_URL),
  // `npm test` type-checks the whole project once (tsc --noEmit); the build need not repeat it.
  typescript: { ignoreBuildErrors: true },
  // On every response: pages, API and static files. Pages get their CSP (with a per-request nonce) and HSTS from proxy.ts.
  // The runtime's hot routes skip Next.js (server/fast-lane.ts, decision 024) and add the same headers themselves.
  async headers() {
    return [
      { source: "/:path*", headers: [...SECURITY_HEADERS] },
      { source: "/api/:path*", headers: [{ key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY }] },
      { source: "/v1/:path*", headers: [{ key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY }] },
    ];
  },
};

export default nextConfig;
