import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Settle logs a JSON line per request (lib/observability/log.ts): tests read answers, not logs.
const env = { SETTLE_LOG_LEVEL: "silent" };

const alias = {
  "@settle/client": fileURLToPath(new URL("./packages/settle-client/src/index.ts", import.meta.url)),
  "@settle/ai-sdk": fileURLToPath(new URL("./packages/settle-ai-sdk/src/index.ts", import.meta.url)),
  "@settle/langchain": fileURLToPath(new URL("./packages/settle-langchain/src/index.ts", import.meta.url)),
  "@settle/openai-agents": fileURLToPath(new URL("./packages/settle-openai-agents/src/index.ts", import.meta.url)),
  "@settle/claude-code": fileURLToPath(new URL("./packages/settle-claude-code/src/index.ts", import.meta.url)),
  "@": fileURLToPath(new URL(".", import.meta.url)),
  // Next.js resolves it to nothing on the server; tests run server code outside Next.js.
  "server-only": fileURLToPath(new URL("./node_modules/server-only/empty.js", import.meta.url)),
};

export default defineConfig({
  resolve: { alias },
  test: {
    // Every integration file opens its own databases, so two run side by side; more only adds contention on 2 cores.
    maxWorkers: 2,
    projects: [
      {
        resolve: { alias },
        test: {
          name: "unit",
          include: [
            "lib/**/*.test.ts",
            "server/**/*.test.ts",
            "cli/**/*.test.ts",
            "components/**/*.test.ts",
            "packages/*/test/**/*.test.ts",
          ],
          environment: "node",
          env,
        },
      },
      {
        resolve: { alias },
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts", "scripts/**/*.test.ts", "examples/**/*.test.ts"],
          environment: "node",
          env,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
