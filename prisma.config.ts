import { defineConfig } from "prisma/config";

// The Prisma CLI is only used to generate the client and, through the WASM
// schema-engine bridge, to author and check migrations. Settle applies
// migrations itself (lib/db/migrate.ts), on PostgreSQL and on PGlite.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: {
    url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/settle",
    shadowDatabaseUrl: process.env.SHADOW_DATABASE_URL,
  },
});
