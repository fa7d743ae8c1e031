// Settle's layers, as data: what each folder (or top-level file) owns and which
// others it may import, type-only imports included. This table is the one
// source of three things, so none can drift from the others:
// - ESLint's import/no-restricted-paths zones (eslint.config.mjs): an import
//   outside a row fails `npm run lint`;
// - the table and the dependency graph in docs/architecture.md (written by
//   scripts/architecture/doc.mjs, checked by `npm run lint`);
// - the check that every permission here is used and the lib/ graph has no cycle.
// Tests (*.test.ts, __tests__/) are outside the layers: they may import anything.
//
// `match`: folder prefixes (ending in /) or files, most specific unit first.
// `entry`: a folder's public entry; the other lib/ folders import it and nothing else of the folder.

const lib = (name, owns, mayImport, entry) => ({
  name: `lib/${name}`,
  match: [`lib/${name}/`],
  owns,
  mayImport,
  ...(entry ? { entry } : {}),
});
const libFile = (name, owns, mayImport) => ({ name: `lib/${name}.ts`, match: [`lib/${name}.ts`], owns, mayImport });

export const units = [
  {
    name: "server/api-client",
    match: ["server/api-client.ts"],
    owns: "the typed API client: each route's params, query, body and answers, typed from its declaration (types only, so it runs in the browser and the CLI)",
    mayImport: ["server", "lib/http", "lib/errors.ts"],
  },
  {
    name: "server",
    match: ["server/"],
    owns: "the top: the route registry (routes.ts), the OpenAPI document built from it, the fast lane (the routes that declare `hot: true`, decision 024) and the server script's limits",
    mayImport: [
      "app",
      "lib/audit",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/guard",
      "lib/http",
      "lib/identity",
      "lib/ingest",
      "lib/invocations",
      "lib/metrics",
      "lib/observability",
      "lib/outcome",
      "lib/policies",
      "lib/process-wide.ts",
      "lib/queue",
      "lib/verify",
      "lib/webhooks",
    ],
  },
  {
    name: "app",
    match: ["app/"],
    owns: "routes and pages only: each route authenticates, parses, calls one lib/ function and answers (withRoute); each page reads through lib/ and renders components. The OpenAPI route loads the document from server/ lazily",
    mayImport: [
      "components",
      "server",
      "lib/audit",
      "lib/catalog",
      "lib/chain",
      "lib/db",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/evidence",
      "lib/first-run.ts",
      "lib/guard",
      "lib/http",
      "lib/identity",
      "lib/ingest",
      "lib/invocations",
      "lib/metrics",
      "lib/notifications",
      "lib/observability",
      "lib/otlp",
      "lib/outcome",
      "lib/policies",
      "lib/queue",
      "lib/retention",
      "lib/slack",
      "lib/verify",
      "lib/webhooks",
    ],
  },
  {
    name: "components",
    match: ["components/"],
    owns: "the console's UI: client components over TanStack Query and the typed client; from lib/ only browser-safe modules and types, never the database",
    mayImport: [
      "server/api-client",
      "lib/audit",
      "lib/catalog",
      "lib/identity",
      "lib/invocations",
      "lib/json",
      "lib/metrics",
      "lib/notifications",
      "lib/outcome",
      "lib/policies",
      "lib/query",
      "lib/queue",
      "lib/retention",
      "lib/slack",
      "lib/verify",
      "lib/webhooks",
    ],
  },
  {
    name: "cli",
    match: ["cli/"],
    owns: "the `settle` CLI: keys, users, tokens, the catalog, notification channels, retention and the archive, evidence packs (export, key, the offline verify), migrations against the database; ingest and simulate over the API with the typed client",
    mayImport: [
      "server/api-client",
      "lib/catalog",
      "lib/chain",
      "lib/db",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/evidence",
      "lib/http",
      "lib/identity",
      "lib/ingest",
      "lib/json",
      "lib/invocations",
      "lib/notifications",
      "lib/outcome",
      "lib/retention",
    ],
  },
  {
    name: "proxy.ts",
    match: ["proxy.ts"],
    owns: "before Next.js routes a request: undecodable addresses, the page CSP with its nonce, HSTS, the requested path for sign-in",
    mayImport: ["lib/env.ts", "lib/errors.ts", "lib/http"],
  },
  {
    name: "instrumentation.ts",
    match: ["instrumentation.ts"],
    owns: "start-up: checks the settings, opens the database, starts the jobs, registers the fast lane for the server script",
    mayImport: ["lib/server-start.ts", "server"],
  },
  lib(
    "http",
    "the route kit: `withRoute` (auth, zod parsing, the error envelope, the request log), the one bounded body reader (ingest's and OTLP's bodies are read with it in their folders), the answers no concept names, Better Auth's entry (auth-handler.ts), security headers",
    ["lib/db", "lib/env.ts", "lib/errors.ts", "lib/identity", "lib/json", "lib/observability", "lib/redact"],
  ),
  lib(
    "jobs",
    "the scheduler and its jobs, one line each calling its area (verifications, policies, queue samples, webhooks, rollups, retention, the audit chain's check)",
    [
      "lib/chain",
      "lib/db",
      "lib/env.ts",
      "lib/invocations",
      "lib/metrics",
      "lib/notifications",
      "lib/observability",
      "lib/retention",
      "lib/slack",
      "lib/verify",
      "lib/webhooks",
    ],
  ),
  lib(
    "retention",
    "a year of data (decision 035): the month partitions made ahead, retention settings, retiring months through the archive (gzipped JSON Lines, manifest, checksums), the kept shelf and audit-trail sweeps, restore",
    [
      "lib/audit",
      "lib/chain",
      "lib/db",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/evidence",
      "lib/outcome",
      "lib/process-wide.ts",
    ],
  ),
  lib(
    "verify",
    "verifiers (decision 027): requests scheduled for unknown calls of tools with `verify`, leased to a runtime's workers, their answers read as probes through ingest, giving up to a person after `max_tries`",
    [
      "lib/catalog",
      "lib/db",
      "lib/errors.ts",
      "lib/ingest",
      "lib/invocations",
      "lib/outcome",
      "lib/process-wide.ts",
      "lib/redact",
      "lib/webhooks",
      "lib/write",
    ],
  ),
  libFile("server-start", "start-up, once per process: settings, the database, the first-run key and admin, the jobs", [
    "lib/db",
    "lib/env.ts",
    "lib/first-run.ts",
    "lib/identity",
    "lib/jobs",
    "lib/process-wide.ts",
  ]),
  libFile(
    "first-run",
    "start-up's first look at the database: the server's address noted for the CLI, the evidence signing key made if there is none; an empty embedded database's first runtime key and admin, printed once",
    ["lib/db", "lib/env.ts", "lib/evidence", "lib/identity", "lib/outcome"],
  ),
  lib(
    "otlp",
    "OTLP/HTTP trace export: the wire scan and decoding (protobuf, JSON), spans, the three tool-span conventions, span records, ingest through lib/ingest, the export answer",
    [
      "lib/catalog",
      "lib/db",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/http",
      "lib/identity",
      "lib/ingest",
      "lib/json",
      "lib/outcome",
      "lib/redact",
      "lib/write",
    ],
  ),
  lib(
    "evidence",
    "signed evidence packs (issue 41): an invocation's whole history as one canonical JSON document signed with Settle's Ed25519 key, bundles of packs for an auditor, the keys (made at first start, rotated, sealed under the auth secret), and the offline check (pure, for the CLI)",
    [
      "lib/chain",
      "lib/db",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/identity",
      "lib/invocations",
      "lib/json",
      "lib/outcome",
    ],
  ),
  lib("guard", "`POST /api/v1/guard`: the check and the write-ahead intent under an advisory lock", [
    "lib/catalog",
    "lib/chain",
    "lib/db",
    "lib/errors.ts",
    "lib/ingest",
    "lib/invocations",
    "lib/outcome",
    "lib/redact",
    "lib/write",
  ]),
  lib("queue", "what needs a person: filters, pages in queue order, saved views, bulk actions", [
    "lib/db",
    "lib/errors.ts",
    "lib/invocations",
    "lib/outcome",
    "lib/policies",
  ]),
  lib(
    "ingest",
    "`POST /api/v1/envelopes`: per-record validation, the dialect adapters (pure), redaction, each call's summary from its catalog entry, a refused value isolated by halving; stored through lib/write",
    [
      "lib/catalog",
      "lib/db",
      "lib/errors.ts",
      "lib/http",
      "lib/invocations",
      "lib/json",
      "lib/observability",
      "lib/outcome",
      "lib/redact",
      "lib/write",
    ],
    "index.ts",
  ),
  lib(
    "invocations",
    "reading an invocation and a task (one reader), the timeline builder (pure, also in the browser), operator actions (through lib/write), the policy job's work, decisions for runtimes",
    [
      "lib/catalog",
      "lib/chain",
      "lib/db",
      "lib/errors.ts",
      "lib/identity",
      "lib/json",
      "lib/outcome",
      "lib/policies",
      "lib/redact",
      "lib/write",
    ],
  ),
  lib(
    "write",
    "the write path (decision 012): a writer's prepared records folded onto their invocations' rows (the rows this process wrote last, or read), the one statement that writes attempts, states, transitions and the rest and checks what it folded from, the contended retry, coalescing a runtime's concurrent requests",
    ["lib/chain", "lib/db", "lib/env.ts", "lib/json", "lib/outcome", "lib/process-wide.ts"],
  ),
  lib(
    "observability",
    "watching Settle run: the JSON log (pino) with a line per request, Prometheus metrics (prom-client) and the scrape's token, the route label a request is counted under",
    ["lib/db", "lib/env.ts", "lib/errors.ts", "lib/outcome", "lib/process-wide.ts"],
  ),
  lib("metrics", "trust metrics, their SQL, hourly rollups and queue samples", [
    "lib/db",
    "lib/env.ts",
    "lib/errors.ts",
    "lib/outcome",
    "lib/retention",
  ]),
  lib(
    "notifications",
    "telling people: channels (Slack-compatible webhook, email), what each collects from status changes and scans, one digest per channel per window through the webhook outbox, Block Kit and plain-text rendering (pure)",
    [
      "lib/audit",
      "lib/catalog",
      "lib/db",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/invocations",
      "lib/outcome",
      "lib/process-wide.ts",
      "lib/slack",
      "lib/webhooks",
    ],
  ),
  lib(
    "slack",
    "the Slack app that acts (docs/slack.md, decision 042): its settings (secrets sealed), links of Slack users to people, the signed interactivity endpoint acting through lib/invocations' operator actions, the per-class policy, Block Kit with bound buttons, the Web API calls",
    [
      "lib/audit",
      "lib/db",
      "lib/env.ts",
      "lib/errors.ts",
      "lib/http",
      "lib/identity",
      "lib/invocations",
      "lib/json",
      "lib/observability",
      "lib/outcome",
      "lib/process-wide.ts",
      "lib/redact",
      "lib/webhooks",
    ],
  ),
  lib(
    "webhooks",
    "events, the outbox, safe delivery, signatures, endpoints and their log; `otlp` endpoints, which get each settled or escalated call as an OTLP span (the official serializer) through the same outbox",
    ["lib/audit", "lib/db", "lib/env.ts", "lib/errors.ts", "lib/invocations", "lib/outcome"],
  ),
  lib(
    "catalog",
    "tool catalogs: a runtime's tool names or patterns → effect class, the reading (pure, `effect-class.ts`), the kept read for ingest (checked against the settings version), editing with audit",
    ["lib/audit", "lib/db", "lib/errors.ts", "lib/json", "lib/outcome", "lib/redact"],
  ),
  lib("policies", "per-class policy rows, their resolution and history, the write path's kept copy", [
    "lib/audit",
    "lib/db",
    "lib/errors.ts",
    "lib/outcome",
  ]),
  lib(
    "identity",
    "Better Auth, sessions, roles, people, runtime keys, personal tokens, the client address, the principal of a request and its scope",
    ["lib/audit", "lib/db", "lib/env.ts", "lib/errors.ts", "lib/process-wide.ts"],
  ),
  lib("audit", "the trail: invocation actions and admin changes (redacted), page and CSV", [
    "lib/chain",
    "lib/db",
    "lib/json",
    "lib/outcome",
    "lib/redact",
  ]),
  lib(
    "chain",
    "the tamper-evident trail: each chained entry's canonical content, its link to its predecessor, the chain heads, the walk that checks them, retention's checkpoints",
    ["lib/db"],
  ),
  lib("query", "the console's TanStack Query key factory and its fetch over the typed client", [
    "lib/errors.ts",
    "lib/json",
  ]),
  lib(
    "db",
    "the database handle (Prisma for single-row reads and writes; the driver for every SQL statement and transaction), migrations, cursors, storable values, the settings version and the settings kept against it",
    ["lib/env.ts", "lib/json", "lib/outcome", "lib/process-wide.ts"],
  ),
  lib(
    "redact",
    "what never leaves Settle in clear: secret key names and token shapes, the one bounded walk that redacts them, storable text (pure but for a bounded memory of names read)",
    ["lib/json", "lib/process-wide.ts"],
  ),
  libFile("errors", "the typed error catalog and Settle's error envelope, in the vocabulary's terms", ["lib/outcome"]),
  libFile("env", "the only reader of `process.env`", ["lib/process-wide.ts"]),
  libFile("process-wide", "the one place state lives on `globalThis`, shared by Next.js's bundles", []),
  lib(
    "json",
    "JSON whose integers keep every digit (decision 039): parsed with BigInts past 2^53 and written back as digits, pure, also in the browser",
    [],
  ),
  lib(
    "outcome",
    "the rules, pure: vocabulary, record field limits, statuses, lifecycle (`move()`), operator actions, the fold, decisions, guard rules, SLA timers, queue order",
    [],
  ),
];

const pathOf = (match) => `./${match.endsWith("/") ? match.slice(0, -1) : match}`;

/**
 * ESLint's import/no-restricted-paths zones for the table: for each unit, one zone per unit it may not
 * import. A forbidden folder that holds a unit the importer may use (server/ and server/api-client.ts)
 * excepts it.
 */
export function lintZones() {
  return [...layerZones(), ...entryZones()];
}

/** A lib/ folder that imports another with an `entry` imports that file alone. */
function entryZones() {
  return units
    .filter((unit) => unit.name.startsWith("lib/"))
    .flatMap((unit) =>
      units
        .filter((other) => other.entry && other !== unit && unit.mayImport.includes(other.name))
        .map((other) => ({
          target: unit.match.map(pathOf),
          from: pathOf(other.match[0]),
          except: [`./${other.entry}`],
          message: `${unit.name} imports ${other.name} through its public entry, ${other.match[0]}${other.entry} (docs/architecture.md): export what it needs there.`,
        })),
    );
}

function layerZones() {
  return units.flatMap((unit) =>
    units
      .filter((other) => other !== unit && !unit.mayImport.includes(other.name))
      .map((other) => {
        const from = other.match.map(pathOf);
        const inside = units.filter(
          (u) =>
            u !== other &&
            unit.mayImport.includes(u.name) &&
            u.match.some((m) => other.match.some((o) => o.endsWith("/") && m.startsWith(o))),
        );
        const except = inside.flatMap((u) => u.match.map((m) => `./${m.slice(other.match[0].length)}`));
        return {
          target: unit.match.map(pathOf),
          from: from.length === 1 ? from[0] : from,
          ...(except.length ? { except } : {}),
          message: `${unit.name} may import only ${unit.mayImport.join(", ") || "nothing"} (docs/architecture.md). If this import is right, change scripts/architecture/layers.mjs in the same commit.`,
        };
      }),
  );
}
