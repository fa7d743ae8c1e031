import { z } from "zod";
import { operatorActionSchema } from "../domain/actions";
import { ingestRecordSchema, attemptLogLineSchema } from "../ingest/record";
import { errorEnvelopeSchema } from "./errors";
import {
  actionEntrySchema,
  attemptSchema,
  healthSchema,
  invocationSummarySchema,
  resolutionSchema,
  ingestResultSchema,
  invocationPageSchema,
  invocationSchema,
  listQuerySchema,
  taskSchema,
} from "./schemas";

// OpenAPI 3.1, generated from the same zod schemas that parse requests and
// shape responses, so the document cannot drift from the code.

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const jsonContent = (schema: object) => ({ "application/json": { schema } });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: `Error (${c})`, content: jsonContent(ref("ErrorEnvelope")) }]));

function componentSchemas() {
  const registry = z.registry<{ id: string }>();
  const add = (id: string, schema: z.ZodType) => registry.add(schema, { id });
  add("ErrorEnvelope", errorEnvelopeSchema);
  add("IngestRecord", ingestRecordSchema);
  add("AttemptLogLine", attemptLogLineSchema);
  add("IngestResult", ingestResultSchema);
  add("Invocation", invocationSchema);
  add("InvocationSummary", invocationSummarySchema);
  add("Attempt", attemptSchema);
  add("ActionEntry", actionEntrySchema);
  add("Resolution", resolutionSchema);
  add("InvocationPage", invocationPageSchema);
  add("Task", taskSchema);
  add("Health", healthSchema);
  add("OperatorAction", operatorActionSchema);
  const out = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}`, unrepresentable: "any", io: "output" });
  // Components are not standalone JSON Schema documents: no $schema, no $id.
  return Object.fromEntries(
    Object.entries(out.schemas).map(([id, schema]) => {
      const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
      return [id, rest];
    }),
  );
}

function queryParameters() {
  const shape = listQuerySchema.shape;
  return Object.entries(shape).map(([name, schema]) => ({
    name,
    in: "query",
    required: false,
    description: (schema as z.ZodType).description,
    schema: name === "limit" ? { type: "integer", minimum: 1, maximum: 200, default: 50 } : { type: "string" },
  }));
}

export function openApiDocument() {
  const auth = [{ bearer: [] }];
  return {
    openapi: "3.1.0",
    info: {
      title: "Settle API",
      version: "1.0.0",
      description:
        "Settle keeps the attempt log of AI-agent tool calls and decides what an uncertain outcome means. Every failure answers with the ErrorEnvelope.",
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A runtime ingest key (stl_rk_…)." } },
      schemas: componentSchemas(),
    },
    paths: {
      "/api/v1/envelopes": {
        post: {
          summary: "Ingest attempt records",
          description: "One record, {\"records\": [...]} (at most 500), or application/x-ndjson. Body at most 1 MiB.",
          security: auth,
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  oneOf: [
                    ref("IngestRecord"),
                    ref("AttemptLogLine"),
                    { type: "object", properties: { records: { type: "array", maxItems: 500, items: ref("IngestRecord") } }, required: ["records"] },
                  ],
                },
              },
              "application/x-ndjson": { schema: { type: "string", description: "One record per line." } },
            },
          },
          responses: { "207": { description: "One result per record, in order.", content: jsonContent(ref("IngestResult")) }, ...errors(400, 401, 413, 415, 500, 503) },
        },
      },
      "/api/v1/invocations": {
        get: {
          summary: "List invocations",
          security: auth,
          parameters: queryParameters(),
          responses: { "200": { description: "A page of invocations.", content: jsonContent(ref("InvocationPage")) }, ...errors(400, 401, 503) },
        },
      },
      "/api/v1/invocations/{invocation_id}": {
        get: {
          summary: "Get an invocation with its attempts and audit trail",
          security: auth,
          parameters: [{ name: "invocation_id", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "The invocation.", content: jsonContent(ref("Invocation")) }, ...errors(401, 404, 503) },
        },
      },
      "/api/v1/tasks/{task_id}": {
        get: {
          summary: "Get a task and its invocations",
          security: auth,
          parameters: [{ name: "task_id", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "The task.", content: jsonContent(ref("Task")) }, ...errors(401, 404, 503) },
        },
      },
      "/api/health": {
        get: {
          summary: "Health of Settle and its database",
          responses: { "200": { description: "Up.", content: jsonContent(ref("Health")) }, ...errors(503) },
        },
      },
    },
  };
}
