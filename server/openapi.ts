import { z } from "zod";
import { processWide } from "@/lib/process-wide";
import { actionRequestSchema } from "@/lib/invocations/act";
import { auditPageSchema, auditEntrySchema } from "@/lib/audit/audit";
import { bulkActionRequestSchema, bulkResultSchema } from "@/lib/queue/bulk-actions";
import { decisionSchema } from "@/lib/invocations/decision-view";
import { guardAnswerSchema, guardRequestSchema } from "@/lib/guard/guard";
import { metricCaseSchema, metricCasesPageSchema, metricsSchema } from "@/lib/metrics/schema";
import { newPersonalTokenSchema, personalTokenInfoSchema } from "@/lib/identity/personal-tokens";
import { policyChangeSchema, policyInputSchema, policyListSchema, policySchema } from "@/lib/policies/policies";
import { queueItemSchema, queuePageSchema, queueTargetsSchema } from "@/lib/queue/queue";
import { newRuntimeKeySchema, runtimeKeyInfoSchema } from "@/lib/identity/runtime-keys";
import { savedViewInputSchema, savedViewSchema } from "@/lib/queue/saved-views";
import { approvalsSchema, slaSchema } from "@/lib/outcome/sla";
import { newUserSchema, userInfoSchema, userPatchSchema } from "@/lib/identity/users";
import { attemptLogLineSchema, ingestRecordSchema, ingestResultSchema } from "@/lib/ingest";
import {
  webhookAttemptSchema,
  webhookDeliveryDetailSchema,
  webhookDeliveryPageSchema,
  webhookDeliverySchema,
} from "@/lib/webhooks/deliveries";
import {
  newWebhookEndpointSchema,
  webhookEndpointPatchSchema,
  webhookEndpointSchema,
  webhookSecretAnswerSchema,
} from "@/lib/webhooks/endpoints";
import { webhookEventSchema } from "@/lib/webhooks/events";
import { verificationRequestedEventSchema } from "@/lib/verify/push";
import { errorEnvelopeSchema, statusOf, type ErrorCode } from "@/lib/errors";
import { apiRoutes } from "./routes";
import { commonErrors, type Method, type ResponseSpec, type RouteMeta } from "@/lib/http/route";
import { healthSchema } from "@/lib/http/schemas";
import {
  actionEntrySchema,
  attemptSchema,
  invocationPageSchema,
  invocationSchema,
  invocationSummarySchema,
  resolutionSchema,
  taskSchema,
  attemptPageSchema,
} from "@/lib/invocations/schemas";

// OpenAPI 3.1, generated from what each route declares in its withRoute call
// (summary, auth, params, query, body, response, errors), found through the
// registry in ./api-routes: the same zod schemas parse the requests and shape
// the answers, so the document cannot drift from the code. The map below only
// names the schemas that are components (clients know them by these names);
// any other schema with a `.meta({ id })` becomes a component under that id,
// and the rest are written inline.

const components: Record<string, z.ZodType> = {
  ErrorEnvelope: errorEnvelopeSchema,
  IngestRecord: ingestRecordSchema,
  AttemptLogLine: attemptLogLineSchema,
  IngestResult: ingestResultSchema,
  Invocation: invocationSchema,
  InvocationSummary: invocationSummarySchema,
  Attempt: attemptSchema,
  AttemptPage: attemptPageSchema,
  ActionEntry: actionEntrySchema,
  Resolution: resolutionSchema,
  InvocationPage: invocationPageSchema,
  Task: taskSchema,
  Health: healthSchema,
  ActionRequest: actionRequestSchema,
  Decision: decisionSchema,
  GuardRequest: guardRequestSchema,
  GuardAnswer: guardAnswerSchema,
  QueuePage: queuePageSchema,
  QueueItem: queueItemSchema,
  Sla: slaSchema,
  Approvals: approvalsSchema,
  Policy: policySchema,
  PolicyInput: policyInputSchema,
  PolicyChange: policyChangeSchema,
  PolicyList: policyListSchema,
  QueueTargets: queueTargetsSchema,
  BulkActionRequest: bulkActionRequestSchema,
  BulkActionResult: bulkResultSchema,
  SavedView: savedViewSchema,
  SavedViewInput: savedViewInputSchema,
  AuditEntry: auditEntrySchema,
  AuditPage: auditPageSchema,
  User: userInfoSchema,
  NewUser: newUserSchema,
  UserPatch: userPatchSchema,
  RuntimeKey: runtimeKeyInfoSchema,
  NewRuntimeKey: newRuntimeKeySchema,
  PersonalToken: personalTokenInfoSchema,
  NewPersonalToken: newPersonalTokenSchema,
  WebhookEndpoint: webhookEndpointSchema,
  NewWebhookEndpoint: newWebhookEndpointSchema,
  WebhookEndpointPatch: webhookEndpointPatchSchema,
  WebhookEndpointWithSecret: webhookSecretAnswerSchema,
  WebhookDelivery: webhookDeliverySchema,
  WebhookDeliveryPage: webhookDeliveryPageSchema,
  WebhookDeliveryDetail: webhookDeliveryDetailSchema,
  WebhookAttempt: webhookAttemptSchema,
  WebhookEvent: webhookEventSchema,
  VerificationRequestedEvent: verificationRequestedEventSchema,
  Metrics: metricsSchema,
  MetricCase: metricCaseSchema,
  MetricCasesPage: metricCasesPageSchema,
};
export const componentIds = Object.keys(components);

const METHODS: readonly Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

export type ApiOperation = { path: string; method: Method; meta: RouteMeta };

/** Every operation the registry's route modules declare: their withRoute exports (otherMethods' 405s have no `.route`). */
export function apiOperations(): ApiOperation[] {
  const out: ApiOperation[] = [];
  for (const [path, mod] of Object.entries(apiRoutes)) {
    for (const method of METHODS) {
      const handler = (mod as Record<string, unknown>)[method] as { route?: RouteMeta } | undefined;
      if (handler?.route) out.push({ path, method, meta: handler.route });
    }
  }
  return out;
}

type Json = Record<string, unknown>;
type Responses = Array<[status: number, spec: ResponseSpec]>;

/** A route's `response`, as status → spec. */
export function responsesOf(meta: RouteMeta): Responses {
  const decl = meta.response;
  if (!decl) return [];
  if (decl instanceof z.ZodType) return [[200, { schema: decl }]];
  return Object.entries(decl).map(([status, spec]) => [
    Number(status),
    spec instanceof z.ZodType ? { schema: spec } : spec,
  ]);
}

function schemasOf(meta: RouteMeta): z.ZodType[] {
  const out = [meta.params, meta.query, meta.body, ...Object.values(meta.requestContent ?? {})];
  for (const [, spec] of responsesOf(meta)) out.push(spec.schema ?? null, ...Object.values(spec.content ?? {}));
  return out.filter((s): s is z.ZodType => s !== null);
}

const REF = "#/components/schemas/";
const ref = (id: string) => ({ $ref: `${REF}${id}` });

/**
 * One conversion of every schema the document uses, so that each named schema
 * is written once, as a component, and referenced everywhere else. A schema
 * without a name is converted under a local id and written inline.
 */
function convertSchemas(operations: ApiOperation[]) {
  const registry = z.registry<{ id: string }>();
  const idOf = new Map<z.ZodType, string>();
  const local = new Set<string>();
  const name = (schema: z.ZodType, id: string) => {
    registry.add(schema, { id });
    idOf.set(schema, id);
  };
  for (const [id, schema] of Object.entries(components)) name(schema, id);
  for (const schema of operations.flatMap((op) => schemasOf(op.meta))) {
    if (idOf.has(schema)) continue;
    const globalId = z.globalRegistry.get(schema)?.id;
    if (globalId) {
      name(schema, globalId);
    } else {
      const id = `__local_${local.size}`;
      name(schema, id);
      local.add(id);
    }
  }
  const out = z.toJSONSchema(registry, { uri: (id) => `${REF}${id}`, unrepresentable: "any", io: "input" });
  // Schemas named only by their own `.meta({ id })` come back as $defs of __shared: they are components too.
  const { __shared: shared, ...converted } = out.schemas as Record<string, Json>;
  const all: Record<string, Json> = { ...converted, ...((shared?.$defs as Record<string, Json> | undefined) ?? {}) };
  const fix = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(fix);
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => {
        if (k !== "$ref" || typeof v !== "string") return [k, fix(v)];
        const target = v.replace(`${REF}__shared#/$defs/`, REF);
        if (local.has(target.slice(REF.length)))
          throw new Error(`An inline schema is nested in another (${target}): give it a name in server/openapi.ts.`);
        return [k, target];
      }),
    );
  };
  const schemas: Record<string, Json> = {};
  const inline: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(all)) {
    // Components are not standalone JSON Schema documents: no $schema, no $id.
    const { $schema: _s, $id: _i, ...rest } = fix(schema) as Json;
    (local.has(id) ? inline : schemas)[id] = rest;
  }
  return {
    schemas,
    /** The schema where it is used: a $ref to its component, or written out. */
    use: (schema: z.ZodType): Json => {
      const id = idOf.get(schema)!;
      return local.has(id) ? inline[id]! : ref(id);
    },
    /** The schema itself, a component's resolved. */
    resolve: (schema: z.ZodType): Json => {
      const id = idOf.get(schema)!;
      return local.has(id) ? inline[id]! : schemas[id]!;
    },
  };
}

type Converted = ReturnType<typeof convertSchemas>;

/** Each property of an object schema as a parameter: its description on the parameter, required as the schema says. */
function parameters(schema: z.ZodType, where: "path" | "query", convert: Converted, names?: string[]) {
  const object = convert.resolve(schema) as { properties?: Record<string, Json>; required?: string[] };
  if (!object.properties) throw new Error(`A ${where} schema must be an object.`);
  const required = new Set(object.required ?? []);
  return (names ?? Object.keys(object.properties)).map((name) => {
    const { description, ...rest } = object.properties![name] ?? { type: "string" };
    return {
      name,
      in: where,
      required: where === "path" || required.has(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

const STATUS_TEXT: Record<number, string> = { 200: "OK", 201: "Created", 207: "Multi-Status", 304: "Not Modified" };

const security = {
  runtime: [{ runtimeKey: [] }],
  user: [{ personalToken: [] }, { session: [] }],
  session: [{ session: [] }],
  any: [{ runtimeKey: [] }, { personalToken: [] }, { session: [] }],
};

/** Every code an operation can answer with, by HTTP status. */
export function errorsByStatus(meta: RouteMeta, method: Method): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...commonErrors(meta, method), ...meta.errors])) {
    const status = statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** getInvocationsByInvocationIdAttempts, for GET /api/v1/invocations/{invocation_id}/attempts. */
function operationId(method: Method, path: string): string {
  const words = path
    .replace(/^\/api(\/v1)?\//, "")
    .split("/")
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      return (param ? `by-${param[1]}` : segment).split(/[^a-zA-Z0-9]+/);
    })
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join("");
}

function operationObject({ path, method, meta }: ApiOperation, convert: Converted) {
  const pathNames = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const pathParams = meta.params
    ? parameters(meta.params, "path", convert, pathNames)
    : pathNames.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
  const content: Record<string, { schema: Json }> = {};
  if (meta.body) content["application/json"] = { schema: convert.use(meta.body) };
  for (const [type, schema] of Object.entries(meta.requestContent ?? {}))
    content[type] = { schema: convert.use(schema) };
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of responsesOf(meta)) {
    const media: Record<string, { schema: Json }> = {};
    if (spec.schema) media["application/json"] = { schema: convert.use(spec.schema) };
    for (const [type, schema] of Object.entries(spec.content ?? {})) media[type] = { schema: convert.use(schema) };
    const description =
      spec.description ??
      (spec.schema && z.globalRegistry.get(spec.schema)?.description) ??
      STATUS_TEXT[status] ??
      `HTTP ${status}`;
    const headers = Object.entries(spec.headers ?? {}).map(([name, about]) => [
      name,
      { description: about, schema: { type: "string" } },
    ]);
    responses[String(status)] = {
      description,
      ...(headers.length ? { headers: Object.fromEntries(headers) } : {}),
      ...(Object.keys(media).length ? { content: media } : {}),
    };
  }
  for (const [status, codes] of errorsByStatus(meta, method)) {
    responses[String(status)] = {
      description: `The error envelope; \`code\` is ${codes.length === 1 ? codes[0] : `one of ${codes.join(", ")}`}.`,
      content: { "application/json": { schema: ref("ErrorEnvelope") } },
    };
  }
  return {
    operationId: operationId(method, path),
    // Served by `npm start`'s fast lane (decision 024), as the route declares.
    ...(meta.hot ? { "x-settle-hot": true } : {}),
    summary: meta.summary,
    ...(meta.description ? { description: meta.description } : {}),
    ...(meta.tags.length ? { tags: meta.tags } : {}),
    security: meta.auth ? security[meta.auth] : [],
    parameters: [...pathParams, ...(meta.query ? parameters(meta.query, "query", convert) : [])],
    ...(Object.keys(content).length ? { requestBody: { required: true, content } } : {}),
    responses,
  };
}

function buildDocument() {
  const operations = apiOperations();
  const convert = convertSchemas(operations);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method.toLowerCase()] = operationObject(op, convert);
  const tags = [...new Set(operations.flatMap((op) => op.meta.tags))].map((name) => ({ name }));
  return {
    openapi: "3.1.0",
    info: {
      title: "Settle API",
      version: "1.0.0",
      description:
        "Settle keeps the attempt log of AI-agent tool calls and decides what an uncertain outcome means. Every failure answers with the ErrorEnvelope.",
    },
    servers: [{ url: "/" }],
    tags,
    components: {
      securitySchemes: {
        runtimeKey: {
          type: "http",
          scheme: "bearer",
          description: "A runtime ingest key (stl_rk_…): ingest, and read its own runtime's data.",
        },
        personalToken: {
          type: "http",
          scheme: "bearer",
          description: "A person's personal access token (stl_pat_…), with their role.",
        },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "better-auth.session_token",
          description: "A signed-in browser session; state-changing requests must carry Settle's own Origin.",
        },
      },
      schemas: convert.schemas,
    },
    paths,
    webhooks: outgoingWebhooks(),
  };
}

/** The document: built once per process (every input is code). */
export function openApiDocument(): ReturnType<typeof buildDocument> {
  return processWide("openApiDocument", buildDocument);
}

/** What Settle POSTs to a runtime's webhook endpoint (README "Webhooks"). */
function outgoingWebhooks() {
  const header = (name: string, description: string) => ({
    name,
    in: "header",
    required: true,
    description,
    schema: { type: "string" },
  });
  const post = (summary: string) => ({
    post: {
      summary,
      parameters: [
        header(
          "Settle-Signature",
          't=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>. Reject when it does not match or t is more than 5 minutes off.',
        ),
        header("Settle-Event-Id", "The event's id: the same on every try; de-duplicate by it."),
        header("Settle-Event-Type", "invocation.settled or invocation.decision_changed."),
      ],
      requestBody: { required: true, content: { "application/json": { schema: ref("WebhookEvent") } } },
      responses: {
        "2XX": {
          description:
            "Delivered. Anything else (or no answer within the timeout) is retried with exponential back-off.",
        },
      },
    },
  });
  return {
    "invocation.settled": post("An invocation reached succeeded, failed, reconciled or rejected"),
    "invocation.decision_changed": post(
      "What the runtime may do next changed (docs/outcome-model.md §5), without a settlement",
    ),
  };
}
