import nextCoreWebVitals from "eslint-config-next/core-web-vitals";
import nextTypescript from "eslint-config-next/typescript";
import { lintZones } from "./scripts/architecture/layers.mjs";

const MODULE_STATE_MESSAGE =
  "Module-level mutable state is one copy per Next.js bundle: keep process-wide state behind processWide (lib/process-wide.ts), or make it a constant.";
const moduleStateSelectors = [
  "Program > VariableDeclaration",
  "Program > ExportNamedDeclaration > VariableDeclaration",
].flatMap((decl) => [
  `${decl}[kind!='const']`,
  `${decl} > VariableDeclarator > NewExpression[callee.name=/^(Map|WeakMap|WeakSet|WeakRef)$/]`,
  `${decl} > VariableDeclarator > NewExpression[callee.name='Set'][arguments.length=0]`,
  `${decl} > VariableDeclarator > ArrayExpression[elements.length=0]`,
]);

const config = [
  ...nextCoreWebVitals,
  ...nextTypescript,
  {
    ignores: [
      ".next/**",
      ".next-*/**",
      "lib/db/generated/**",
      "node_modules/**",
      "test-results/**",
      "test-results-*/**",
      "next-env.d.ts",
      "bench/results/**",
      "packages/*/dist/**",
    ],
  },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
      "@typescript-eslint/consistent-type-definitions": ["error", "type"],
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read settings through lib/env.ts." },
      ],
    },
  },
  {
    files: [
      "lib/**/*.ts",
      "app/**/*.{ts,tsx}",
      "components/**/*.{ts,tsx}",
      "cli/**/*.ts",
      "server/**/*.ts",
      "proxy.ts",
      "packages/*/src/**/*.ts",
      "packages/*/test/**/*.ts",
    ],
    rules: { "max-lines": ["error", { max: 400 }] },
  },
  // The layers: generated from the table in scripts/architecture/layers.mjs (docs/architecture.md shows it),
  // type-only imports included. Tests are outside the layers.
  {
    files: [
      "lib/**/*.ts",
      "app/**/*.{ts,tsx}",
      "components/**/*.{ts,tsx}",
      "cli/**/*.ts",
      "server/**/*.ts",
      "proxy.ts",
      "instrumentation.ts",
    ],
    ignores: ["**/*.test.ts", "**/*.test.tsx", "**/__tests__/**"],
    rules: { "import/no-restricted-paths": ["error", { zones: lintZones() }] },
  },
  // What the table cannot say, being about packages: the pure rules import nothing with I/O, and the browser's code no database driver.
  {
    files: ["lib/outcome/**/*.ts", "lib/redact/**/*.ts", "lib/catalog/effect-class.ts"],
    ignores: ["**/*.test.ts", "**/__tests__/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["node:*", "pg", "@prisma/*", "**/db/*", "**/catalog/load", "**/catalog/catalog"],
              message: "The pure rules import nothing with I/O (zod only).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["app/**/*.tsx", "components/**/*.{ts,tsx}"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@/lib/db/*", "**/lib/db/*", "@prisma/*", "pg"],
              allowTypeImports: true,
              message: "Pages and components read through lib/ functions, never the database layer.",
            },
          ],
        },
      ],
    },
  },
  // Modules the console ships to the browser stay free of zod (it would add ~30 kB to every page's first load).
  {
    files: [
      "lib/outcome/{status,transitions,queue-order,durations}.ts",
      "lib/queue/filters.ts",
      "lib/invocations/{timeline-builder,task-order}.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "zod",
              message: "This module runs in the browser: keep zod out (schemas live in lib/outcome/vocabulary.ts).",
            },
          ],
        },
      ],
    },
  },
  // Process-wide state lives behind processWide (lib/process-wide.ts): Next.js bundles the routes, pages,
  // instrumentation and the fast lane apart, so module-level state would be one copy per bundle.
  {
    files: ["lib/**/*.ts", "server/**/*.ts"],
    ignores: ["**/*.test.ts", "**/__tests__/**", "lib/process-wide.ts", "lib/db/generated/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...moduleStateSelectors.map((selector) => ({ selector, message: MODULE_STATE_MESSAGE })),
      ],
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
