import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";

const config = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    ignores: [".next/**", ".next-*/**", "lib/db/generated/**", "node_modules/**", "test-results/**", "test-results-*/**", "next-env.d.ts", "bench/results/**", "packages/*/dist/**"],
  },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-definitions": ["error", "type"],
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read settings through lib/env.ts." }],
    },
  },
  {
    files: ["lib/env.ts", "instrumentation.ts", "*.config.*", "scripts/**", "bench/**", "e2e/**", "bin/**", "tests/**"],
    rules: { "no-restricted-properties": "off" },
  },
  {
    files: ["tests/**", "e2e/**", "**/*.test.ts", "bench/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
];

export default config;
