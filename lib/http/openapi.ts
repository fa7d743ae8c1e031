import { z } from "zod";
import { actionRequestSchema } from "../invocations/act";
import { auditPageSchema, auditQuerySchema, auditEntrySchema } from "../audit/audit";
import { bulkActionRequestSchema, bulkResultSchema } from "../invocations/bulk-actions";
import { decisionQuerySchema, decisionSchema } from "../invocations/decision-view";
import { guardAnswerSchema, guardRequestSchema } from "../guard/guard";
import { metricCaseSchema, metricCasesPageSchema, metricCasesQuerySchema, metricsQuerySchema, metricsSchema } from "../metrics/schema";
import { newPersonalTokenSchema, personalTokenInfoSchema } from "../identity/personal-tokens";
import { policyChangeSchema, policyInputSchema, policyListSchema, policySchema } from "../policies/policies";
import { queueFilterSchema, queueItemSchema, queuePageSchema, queueQuerySchema, queueTargetsSchema } from "../queue/queue";
import { newRuntimeKeySchema, runtimeKeyInfoSchema } from "../identity/runtime-keys";
import { savedViewInputSchema, savedViewSchema } from "../queue/saved-views";
import { approvalsSchema, slaSchema } from "../outcome/sla";
import { newUserSchema, userInfoSchema, userPatchSchema } from "../identity/users";
import { attemptLogLineSchema, ingestRecordSchema } from "../ingest/record";
import { deliveryQuerySchema, webhookAttemptSchema, webhookDeliveryDetailSchema, webhookDeliveryPageSchema, webhookDeliverySchema } from "../webhooks/deliveries";
import { newWebhookEndpointSchema, webhookEndpointPatchSchema, webhookEndpointSchema, webhookSecretAnswerSchema } from "../webhooks/endpoints";
import { webhookEventSchema } from "../webhooks/events";
import { errorEnvelopeSchema } from "../errors";
import {
  actionEntrySchema,
  attemptSchema,
  healthSchema,
  ingestResultSchema,
  invocationPageSchema,
  invocationSchema,
  invocationSummarySchema,
  listQuerySchema,
  resolutionSchema,
  taskSchema,
  attemptPageSchema,
} from "./schemas";

// OpenAPI 3.1, generated from the same zod schemas that parse requests and
// shape responses, so the document cannot drift from the code. Operations are
// declared as data below; components come from the schemas.

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
  Metrics: metricsSchema,
  MetricCase: metricCaseSchema,
  MetricCasesPage: metricCasesPageSchema,
};
export const componentIds = Object.keys(components);

type Body = { id: string } | { schema: object };
type Operation = {
  method: "get" | "post" | "put" | "patch" | "delete";
  path: string;
  summary: string;
  description?: string;
  /** runtime: ingest key; user: session or personal token; any: either; none: no auth. */
  auth: "runtime" | "user" | "any" | "none";
  query?: z.ZodObject;
  body?: Body & { contentTypes?: Record<string, object> };
  ok: { status: number; description: string } & Body;
  extraOk?: Record<string, object>;
  /** Responses besides the success and the errors (a 304, say). */
  extraResponses?: Record<string, object>;
  errors: number[];
};

const list = (id: string) => ({ schema: { type: "object", properties: { items: { type: "array", items: ref(id) } }, required: ["items"] } });
const param = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });
const runtimeParam = z.object({ runtime: z.string().optional().describe("The runtime's name, when several runtimes use this id.") });

const operations: Operation[] = [
  {
    method: "post", path: "/api/v1/envelopes", auth: "runtime", summary: "Ingest attempt records",
    description: "One record, {\"records\": [...]} (at most 500), or application/x-ndjson. Body at most 1 MiB. Idempotent by event_id.",
    body: {
      schema: { oneOf: [ref("IngestRecord"), ref("AttemptLogLine"), { type: "object", properties: { records: { type: "array", maxItems: 500, items: ref("IngestRecord") } }, required: ["records"] }] },
      contentTypes: { "application/x-ndjson": { schema: { type: "string", description: "One record per line." } } },
    },
    ok: { status: 207, description: "One result per record, in order.", id: "IngestResult" },
    errors: [400, 401, 403, 413, 415, 500, 503],
  },
  { method: "get", path: "/api/v1/invocations", auth: "any", summary: "List invocations", query: listQuerySchema, ok: { status: 200, description: "A page.", id: "InvocationPage" }, errors: [400, 401, 403, 503] },
  { method: "get", path: "/api/v1/invocations/{invocation_id}", auth: "any", summary: "An invocation with its attempts and audit trail", description: "Its latest 200 attempts, with attempts_total and, when there are more, attempts_earlier.", query: runtimeParam, ok: { status: 200, description: "The invocation.", id: "Invocation" }, errors: [401, 403, 404, 503] },
  {
    method: "get", path: "/api/v1/invocations/{invocation_id}/attempts", auth: "any", summary: "An invocation's attempts, a page at a time",
    query: z.object({ runtime: z.string().optional(), before: z.string().optional().describe("attempts_earlier, or a page's earlier; left out, the latest page."), limit: z.coerce.number().int().min(1).max(500).default(200) }),
    ok: { status: 200, description: "A page, oldest first.", id: "AttemptPage" }, errors: [400, 401, 403, 404, 503],
  },
  {
    method: "post", path: "/api/v1/invocations/{invocation_id}/actions", auth: "user", summary: "Act on an invocation",
    description: "Checked against the version you saw (409 VERSION_CONFLICT otherwise) and the transitions SPEC §4 allows (409 TRANSITION_REFUSED).",
    body: { id: "ActionRequest" }, ok: { status: 200, description: "The updated invocation.", id: "Invocation" }, errors: [400, 401, 403, 404, 409, 415, 503],
  },
  {
    method: "get", path: "/api/v1/invocations/{invocation_id}/decision", auth: "runtime", summary: "What the runtime may do next with its own invocation",
    description:
      "SPEC §5. Another runtime's invocation is a 404. `wait=N` holds the request up to N seconds until the decision, status, version or commit state changes (compared with If-None-Match when given, else with the state when the request arrived). The answer carries a strong ETag; If-None-Match naming it answers 304 (with `wait`, only once the wait ran out unchanged). Cache-Control: no-store.",
    query: decisionQuerySchema,
    ok: { status: 200, description: "The decision. Header ETag.", id: "Decision" },
    extraResponses: { "304": { description: "Unchanged since the ETag in If-None-Match. Header ETag." } },
    errors: [400, 401, 403, 404, 503],
  },
  {
    method: "post", path: "/api/v1/guard", auth: "runtime", summary: "Ask before a write; an allowed write's intent is recorded",
    description:
      "SPEC §5, seed 004. Looks at every invocation of the runtime with the idempotency key: committed → already_committed; unknown, partial, stalled, verifying or escalated → outcome_unknown; pending, awaiting approval, retry_scheduled before not_before, or approved under another invocation → in_flight. Otherwise allows and records an `intent` (the next attempt of the invocation named, or of an approved or settled-not-committed one of the task with this key, or of a new invocation `task_id:idempotency_key`), so the invocation is pending. Denials are answered 200 too; each is a duplicate prevented. 409 TRANSITION_REFUSED names a rejected invocation; 400 an invocation that carries another key.",
    body: { id: "GuardRequest" },
    ok: { status: 200, description: "Allowed or denied.", id: "GuardAnswer" },
    errors: [400, 401, 403, 409, 415, 503],
  },
  { method: "get", path: "/api/v1/tasks/{task_id}", auth: "any", summary: "A task and its invocations", query: runtimeParam, ok: { status: 200, description: "The task.", id: "Task" }, errors: [401, 403, 404, 503] },
  {
    method: "get", path: "/api/v1/tasks/{task_id}/timeline", auth: "any", summary: "A task's timeline events, oldest first",
    description: "The first `limit` events (records without envelopes, waits, actions, markers) of the task's timeline, `total` of them in all; `lanes` names the invocation of each event's `lane`.",
    query: runtimeParam.extend({ limit: z.coerce.number().int().min(1).max(5000).optional().describe("How many events, from the first (150).") }),
    ok: {
      status: 200, description: "The events.",
      schema: { type: "object", properties: { start: { type: "string" }, end: { type: "string" }, now: { type: "string" }, total: { type: "integer" }, lanes: { type: "array", items: { type: "object" } }, events: { type: "array", items: { type: "object" } } }, required: ["start", "end", "now", "total", "lanes", "events"] },
    },
    errors: [400, 401, 403, 404, 503],
  },
  { method: "get", path: "/api/v1/queue", auth: "any", summary: "Everything that needs a person, headline first", query: queueQuerySchema, ok: { status: 200, description: "A page of the queue.", id: "QueuePage" }, errors: [400, 401, 403, 503] },
  { method: "get", path: "/api/v1/queue/ids", auth: "any", summary: "Targets for 'select all matching this filter'", query: queueFilterSchema, ok: { status: 200, description: "Up to 5,000 targets.", id: "QueueTargets" }, errors: [400, 401, 403, 503] },
  { method: "post", path: "/api/v1/bulk-actions", auth: "user", summary: "One action on many invocations, with a result per item", body: { id: "BulkActionRequest" }, ok: { status: 200, description: "Per-item results.", id: "BulkActionResult" }, errors: [400, 401, 403, 415, 503] },
  { method: "get", path: "/api/v1/saved-views", auth: "user", summary: "Your saved queue views", ok: { status: 200, description: "Views.", ...list("SavedView") }, errors: [401, 503] },
  { method: "post", path: "/api/v1/saved-views", auth: "user", summary: "Save a queue view", body: { id: "SavedViewInput" }, ok: { status: 200, description: "The view.", id: "SavedView" }, errors: [400, 401, 415, 503] },
  { method: "delete", path: "/api/v1/saved-views/{id}", auth: "user", summary: "Delete one of your saved views", ok: { status: 200, description: "Deleted.", schema: { type: "object", properties: { deleted: { const: true } } } }, errors: [401, 404, 503] },
  {
    method: "get", path: "/api/v1/audit", auth: "user", summary: "The audit trail, newest first", description: "`format=csv` streams every matching entry as CSV.",
    query: auditQuerySchema, ok: { status: 200, description: "A page of entries.", id: "AuditPage" }, extraOk: { "text/csv": { schema: { type: "string" } } }, errors: [400, 401, 403, 503],
  },
  {
    method: "get", path: "/api/v1/metrics", auth: "user", summary: "Trust metrics over [from, to) (managers and admins)",
    description: "SPEC §6, per tool and runtime, with a per-tool breakdown and a series per hour (ranges up to 2 days) or day. `format=csv`: one row per tool and one for all tools. Runtime keys get 403.",
    query: metricsQuerySchema, ok: { status: 200, description: "The metrics.", id: "Metrics" }, extraOk: { "text/csv": { schema: { type: "string" } } }, errors: [400, 401, 403, 404, 503],
  },
  {
    method: "get", path: "/api/v1/metrics/cases", auth: "user", summary: "The invocations behind one number of the metrics (managers and admins)",
    query: metricCasesQuerySchema, ok: { status: 200, description: "A page of cases, newest event first.", id: "MetricCasesPage" }, errors: [400, 401, 403, 404, 503],
  },
  { method: "get", path: "/api/v1/admin/users", auth: "user", summary: "Users (admins)", ok: { status: 200, description: "Users.", ...list("User") }, errors: [401, 403, 503] },
  {
    method: "post", path: "/api/v1/admin/users", auth: "user", summary: "Create a user (admins); a generated password is answered once", body: { id: "NewUser" },
    ok: { status: 201, description: "The user, and the generated password or null.", schema: { type: "object", properties: { user: ref("User"), password: { type: ["string", "null"] } } } }, errors: [400, 401, 403, 409, 503],
  },
  { method: "patch", path: "/api/v1/admin/users/{user_id}", auth: "user", summary: "Change a user's role or deactivate them (admins)", body: { id: "UserPatch" }, ok: { status: 200, description: "The user.", id: "User" }, errors: [400, 401, 403, 404, 409, 503] },
  { method: "get", path: "/api/v1/admin/runtime-keys", auth: "user", summary: "Runtime ingest keys (admins)", ok: { status: 200, description: "Keys.", ...list("RuntimeKey") }, errors: [401, 403, 503] },
  {
    method: "post", path: "/api/v1/admin/runtime-keys", auth: "user", summary: "Create a runtime key (admins); the key is answered once", body: { id: "NewRuntimeKey" },
    ok: { status: 201, description: "The new key.", schema: { type: "object", properties: { key: { type: "string" }, prefix: { type: "string" }, runtime: { type: "string" } } } }, errors: [400, 401, 403, 503],
  },
  { method: "post", path: "/api/v1/admin/runtime-keys/{prefix}/revoke", auth: "user", summary: "Revoke a runtime key (admins)", ok: { status: 200, description: "The key and whether it was already revoked.", schema: { type: "object", properties: { key: ref("RuntimeKey"), already_revoked: { type: "boolean" } } } }, errors: [401, 403, 404, 503] },
  { method: "get", path: "/api/v1/me/tokens", auth: "user", summary: "Your personal access tokens", ok: { status: 200, description: "Tokens.", ...list("PersonalToken") }, errors: [401, 503] },
  { method: "post", path: "/api/v1/me/tokens", auth: "user", summary: "Create a personal access token; answered once", body: { id: "NewPersonalToken" }, ok: { status: 201, description: "The token, with its secret.", schema: { allOf: [ref("PersonalToken"), { type: "object", properties: { token: { type: "string" } } }] } }, errors: [400, 401, 503] },
  { method: "post", path: "/api/v1/me/tokens/{prefix}/revoke", auth: "user", summary: "Revoke one of your tokens", ok: { status: 200, description: "The token and whether it was already revoked.", schema: { type: "object", properties: { token: ref("PersonalToken"), already_revoked: { type: "boolean" } } } }, errors: [401, 404, 503] },
  { method: "get", path: "/api/v1/policies", auth: "user", summary: "The policy in effect for every effect class, and the latest changes", ok: { status: 200, description: "Policies, the default (`*`) first.", id: "PolicyList" }, errors: [401, 403, 503] },
  {
    method: "put", path: "/api/v1/policies/{effect_class}", auth: "user", summary: "Set an effect class's own policy (admins)",
    description: "`effect_class` is money, destructive, send, create, read or `*` (the default for classes without their own row). The body is the whole policy: null switches a timer off for this class. overdue_after_s must be shorter than escalate_after_s.",
    body: { id: "PolicyInput" }, ok: { status: 200, description: "The policy now in effect for the class.", id: "Policy" }, errors: [400, 401, 403, 415, 503],
  },
  { method: "delete", path: "/api/v1/policies/{effect_class}", auth: "user", summary: "Remove an effect class's own policy; it uses the default again (admins)", ok: { status: 200, description: "The policy now in effect for the class.", id: "Policy" }, errors: [401, 403, 404, 503] },
  { method: "get", path: "/api/v1/admin/webhooks", auth: "user", summary: "Runtimes' webhook endpoints, without secrets (admins)", ok: { status: 200, description: "Endpoints.", ...list("WebhookEndpoint") }, errors: [401, 403, 503] },
  { method: "post", path: "/api/v1/admin/webhooks", auth: "user", summary: "Add a webhook endpoint to a runtime (admins); its signing secret is answered once", body: { id: "NewWebhookEndpoint" }, ok: { status: 201, description: "The endpoint and its secret.", id: "WebhookEndpointWithSecret" }, errors: [400, 401, 403, 415, 503] },
  { method: "get", path: "/api/v1/admin/webhooks/{endpoint_id}", auth: "user", summary: "One webhook endpoint (admins)", ok: { status: 200, description: "The endpoint.", id: "WebhookEndpoint" }, errors: [401, 403, 404, 503] },
  { method: "patch", path: "/api/v1/admin/webhooks/{endpoint_id}", auth: "user", summary: "Change a webhook endpoint's URL, or enable / disable it (admins)", body: { id: "WebhookEndpointPatch" }, ok: { status: 200, description: "The endpoint.", id: "WebhookEndpoint" }, errors: [400, 401, 403, 404, 415, 503] },
  { method: "delete", path: "/api/v1/admin/webhooks/{endpoint_id}", auth: "user", summary: "Delete a webhook endpoint with its deliveries (admins)", ok: { status: 200, description: "Deleted.", schema: { type: "object", properties: { deleted: { const: true } } } }, errors: [401, 403, 404, 503] },
  { method: "post", path: "/api/v1/admin/webhooks/{endpoint_id}/rotate-secret", auth: "user", summary: "Replace an endpoint's signing secret (admins); the new one is answered once and signs every delivery from now on", ok: { status: 200, description: "The endpoint and its new secret.", id: "WebhookEndpointWithSecret" }, errors: [401, 403, 404, 503] },
  { method: "get", path: "/api/v1/admin/webhooks/{endpoint_id}/deliveries", auth: "user", summary: "An endpoint's delivery log, newest first (admins)", query: deliveryQuerySchema, ok: { status: 200, description: "A page of deliveries.", id: "WebhookDeliveryPage" }, errors: [400, 401, 403, 404, 503] },
  { method: "get", path: "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}", auth: "user", summary: "One delivery with its payload and every try (admins)", ok: { status: 200, description: "The delivery.", id: "WebhookDeliveryDetail" }, errors: [401, 403, 404, 503] },
  { method: "post", path: "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend", auth: "user", summary: "Send a delivery again from the start: pending now, a fresh set of attempts; records who asked (admins)", ok: { status: 200, description: "The delivery.", id: "WebhookDelivery" }, errors: [401, 403, 404, 503] },
  { method: "get", path: "/api/health", auth: "none", summary: "Health of Settle and its database", ok: { status: 200, description: "Up.", id: "Health" }, errors: [503] },
];

function ref(id: string) {
  return { $ref: `#/components/schemas/${id}` };
}

const schemaOf = (body: Body) => ("id" in body ? ref(body.id) : body.schema);

function componentSchemas() {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(components)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}`, unrepresentable: "any", io: "input" });
  // Components are not standalone JSON Schema documents: no $schema, no $id.
  return Object.fromEntries(
    Object.entries(out.schemas).map(([id, schema]) => {
      const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
      return [id, rest];
    }),
  );
}

function queryParameters(schema: z.ZodObject) {
  return Object.entries(schema.shape).map(([name, field]) => {
    const json = z.toJSONSchema(field as z.ZodType, { unrepresentable: "any", io: "input" }) as Record<string, unknown>;
    const { $schema: _s, description, ...rest } = json;
    return { name, in: "query", required: false, ...(description ? { description } : {}), schema: rest };
  });
}

const security = { runtime: [{ runtimeKey: [] }], user: [{ personalToken: [] }, { session: [] }], any: [{ runtimeKey: [] }, { personalToken: [] }, { session: [] }], none: [] };

function operationObject(op: Operation) {
  const errors = Object.fromEntries(op.errors.map((c) => [String(c), { description: `Error (${c})`, content: { "application/json": { schema: ref("ErrorEnvelope") } } }]));
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => param(m[1]!));
  return {
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: security[op.auth],
    parameters: [...pathParams, ...(op.query ? queryParameters(op.query) : [])],
    ...(op.body
      ? { requestBody: { required: true, content: { "application/json": { schema: schemaOf(op.body) }, ...op.body.contentTypes } } }
      : {}),
    responses: {
      [String(op.ok.status)]: { description: op.ok.description, content: { "application/json": { schema: schemaOf(op.ok) }, ...op.extraOk } },
      ...op.extraResponses,
      ...errors,
    },
  };
}

export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method] = operationObject(op);
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
      securitySchemes: {
        runtimeKey: { type: "http", scheme: "bearer", description: "A runtime ingest key (stl_rk_…): ingest, and read its own runtime's data." },
        personalToken: { type: "http", scheme: "bearer", description: "A person's personal access token (stl_pat_…), with their role." },
        session: { type: "apiKey", in: "cookie", name: "better-auth.session_token", description: "A signed-in browser session; state-changing requests must carry Settle's own Origin." },
      },
      schemas: componentSchemas(),
    },
    paths,
    webhooks: outgoingWebhooks(),
  };
}

/** What Settle POSTs to a runtime's webhook endpoint (README "Webhooks"). */
function outgoingWebhooks() {
  const header = (name: string, description: string) => ({ name, in: "header", required: true, description, schema: { type: "string" } });
  const post = (summary: string) => ({
    post: {
      summary,
      parameters: [
        header("Settle-Signature", "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, \"<t>.<raw body>\")>. Reject when it does not match or t is more than 5 minutes off."),
        header("Settle-Event-Id", "The event's id: the same on every try; de-duplicate by it."),
        header("Settle-Event-Type", "invocation.settled or invocation.decision_changed."),
      ],
      requestBody: { required: true, content: { "application/json": { schema: ref("WebhookEvent") } } },
      responses: { "2XX": { description: "Delivered. Anything else (or no answer within the timeout) is retried with exponential back-off." } },
    },
  });
  return {
    "invocation.settled": post("An invocation reached succeeded, failed, reconciled or rejected"),
    "invocation.decision_changed": post("What the runtime may do next changed (SPEC §5), without a settlement"),
  };
}
