import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite ships its own wasm and data files; bundling them breaks their lookup.
  serverExternalPackages: ["@electric-sql/pglite", "pglite-prisma-adapter"],
  poweredByHeader: false,
};

export default nextConfig;
