import { execFileSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import * as client from "@settle/client";
import { effectClasses as gatewayEffectClasses } from "../../packages/settle-mcp-gateway/src/config";
import { openApiDocument } from "@/server/openapi";

// The clients are published on their own, so each keeps its own copy of the
// vocabulary Settle's API speaks. This holds every copy against the enums of
// the generated OpenAPI document, which come from the server's own zod
// schemas: a value added to or renamed in one place and not the others fails here.

type Schema = { enum?: string[]; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; $ref?: string };
const schemas = (openApiDocument() as unknown as { components: { schemas: Record<string, Schema> } }).components
  .schemas;

/** The enum at `Component.path.to.prop` (`[]` steps into array items), following $refs. */
function enumAt(where: string): string[] {
  const [component, ...steps] = where.split(".");
  let schema: Schema | undefined = schemas[component!];
  const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? schemas[s.$ref.split("/").pop()!] : s);
  for (const step of steps) {
    schema = resolve(schema);
    schema = step === "[]" ? schema?.items : schema?.properties?.[step];
  }
  schema = resolve(schema);
  const values = schema?.enum ?? schema?.anyOf?.find((s) => s.enum)?.enum;
  if (!values) throw new Error(`no enum at ${where} in the OpenAPI document`);
  return values;
}

const server = {
  effectClasses: enumAt("ToolCatalogEntry.effect_class"),
  phases: enumAt("IngestRecord.phase"),
  commitStates: enumAt("ErrorEnvelope.commit_state"),
  retryDirectives: enumAt("ErrorEnvelope.retry.directive"),
  recordStatuses: enumAt("IngestResult.results.[].status"),
  guardReasons: enumAt("GuardAnswer.reason"),
  decisionKinds: enumAt("Decision.decision"),
};

const sorted = (values: readonly string[]) => [...values].sort();

describe("the clients' copies of Settle's vocabulary match the OpenAPI document", () => {
  it("@settle/client (TypeScript)", () => {
    for (const [name, values] of Object.entries(server)) {
      expect(sorted(client[name as keyof typeof server]), name).toEqual(sorted(values));
    }
  });

  it("settle-mcp, the MCP gateway", () => {
    expect(sorted(gatewayEffectClasses)).toEqual(sorted(server.effectClasses));
  });

  it("settle_client (Python)", () => {
    const script = [
      "import json, typing",
      "from settle_client import wire",
      "args = lambda t: list(typing.get_args(t))",
      "print(json.dumps({",
      "  'effectClasses': args(wire.EffectClass),",
      "  'phases': args(wire.Phase),",
      "  'commitStates': args(wire.CommitState),",
      "  'retryDirectives': args(typing.get_type_hints(wire.RetryHint)['directive']),",
      // spooled: the client's own answer for a record it kept to send later, never Settle's.
      "  'recordStatuses': [s for s in args(wire.ReportStatus) if s != 'spooled'],",
      "  'guardReasons': args(wire.GuardReason),",
      "  'decisionKinds': args(wire.DecisionKind),",
      "}))",
    ].join("\n");
    const out = execFileSync("python3", ["-c", script], {
      env: { ...process.env, PYTHONPATH: path.resolve("packages/settle-py/src") },
      encoding: "utf8",
    });
    const python = JSON.parse(out) as Record<keyof typeof server, string[]>;
    for (const [name, values] of Object.entries(server)) {
      expect(sorted(python[name as keyof typeof server]), name).toEqual(sorted(values));
    }
  });
});
