import "server-only";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import { deleteAudited, recordAdminAction } from "../audit/admin";
import { env } from "../env";
import { checkWebhookUrl, type LookupFn } from "./safe-url";
import { newWebhookSecret } from "./signature";

// Where each runtime hears about settlements and decision changes. The secret
// signs every delivery, so Settle keeps it (not a hash); it is answered only
// when an endpoint is created or its secret rotated, never in a list.

const time = z.string().meta({ format: "date-time" });

export const webhookUrlSchema = z
  .string()
  .trim()
  .max(2000)
  .pipe(z.url({ protocol: /^https?$/, error: "an http:// or https:// URL" }))
  .describe(
    "Where Settle POSTs events: http or https only, no user:pass@, and a public address (a host name must resolve, to public addresses only) unless the Settle server runs with SETTLE_WEBHOOK_ALLOW_PRIVATE=1.",
  );

/** Where an endpoint's requests go: Settle's signed events, or OTLP spans for the team's traces (docs/audit.md). */
export const endpointKinds = ["webhook", "otlp"] as const;

// A header Settle sets itself cannot be given: the request must stay what it says it is.
const RESERVED_HEADERS = new Set([
  "host",
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
]);

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;

/** Why a header name cannot be given; null when it can. */
function headerNameProblem(name: string): string | null {
  if (!HEADER_NAME.test(name)) return "not a header name (1 to 100 letters, digits, - and the like)";
  if (RESERVED_HEADERS.has(name.toLowerCase())) return "a header Settle sets itself (Host, Content-Type and the like)";
  return null;
}

// Names are checked by the record's own refinement, not a key schema: zod answers a refused key only as
// "Invalid key in record", and the admin must learn which rule the name broke.
export const otlpHeadersSchema = z
  .record(
    z.string(),
    z
      .string()
      .max(4000)
      .regex(/^[^\r\n\0]*$/, "no line breaks"),
  )
  .superRefine((headers, ctx) => {
    for (const name of Object.keys(headers)) {
      const problem = headerNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
    }
  })
  .refine((h) => Object.keys(h).length <= 20, "at most 20 headers")
  .describe(
    "otlp only: headers sent with every export (e.g. a collector's API key). Never answered, only their names.",
  );

export const newWebhookEndpointSchema = z
  .object({
    runtime: z.string().trim().min(1).max(200).describe("The runtime (by name) whose events go to this URL."),
    url: webhookUrlSchema,
    kind: z
      .enum(endpointKinds)
      .default("webhook")
      .describe(
        "webhook: signed JSON events. otlp: each settled or escalated call exported to this OTLP/HTTP traces URL (…/v1/traces) as a span, protobuf, through the same outbox.",
      ),
    headers: otlpHeadersSchema.optional(),
  })
  .refine((e) => e.kind === "otlp" || e.headers === undefined, {
    message: "headers are for otlp endpoints",
    path: ["headers"],
  })
  .meta({ id: "NewWebhookEndpoint" });

export const webhookEndpointPatchSchema = z
  .object({
    url: webhookUrlSchema.optional(),
    enabled: z
      .boolean()
      .optional()
      .describe("A disabled endpoint gets no new events, and its pending deliveries wait until it is enabled again."),
    headers: otlpHeadersSchema
      .optional()
      .describe(
        "otlp only: replaces every header it sends ({} sends none), checked as when it was added. Never answered, only their names.",
      ),
  })
  .refine(
    (p) => p.url !== undefined || p.enabled !== undefined || p.headers !== undefined,
    "send url, enabled, headers or several of them",
  )
  .meta({ id: "WebhookEndpointPatch" });

export const webhookEndpointSchema = z
  .object({
    id: z.string(),
    runtime: z.string(),
    kind: z.enum(endpointKinds),
    url: z.string(),
    header_names: z
      .array(z.string())
      .describe("otlp: the names of the headers it sends (their values are never answered)."),
    enabled: z.boolean(),
    created_at: time,
    updated_at: time,
    deliveries: z
      .object({ pending: z.number().int(), delivered: z.number().int(), failed: z.number().int() })
      .describe("How many deliveries are in each state."),
    last_attempt_at: time.nullable(),
    last_status_code: z
      .number()
      .int()
      .nullable()
      .describe("The HTTP status of the latest try, null when it got no answer or there was none."),
  })
  .meta({ id: "WebhookEndpoint" });
export type WebhookEndpointInfo = z.infer<typeof webhookEndpointSchema>;

export const webhookSecretAnswerSchema = z
  .object({
    endpoint: webhookEndpointSchema,
    secret: z.string().describe("whsec_…: shown this once. Verify Settle-Signature with it."),
  })
  .meta({ id: "WebhookEndpointWithSecret" });

type EndpointRow = {
  id: string;
  runtime: string;
  kind: (typeof endpointKinds)[number];
  url: string;
  header_names: string[];
  enabled: boolean;
  created_at: string;
  updated_at: string;
  pending: number;
  delivered: number;
  failed: number;
  last_attempt_at: string | null;
  last_status_code: number | null;
};

const SELECT_ENDPOINTS = `
  SELECT e.id::text AS id, r.name AS runtime, e.kind, e.url,
         ARRAY(SELECT jsonb_object_keys(e.headers) ORDER BY 1) AS header_names, e.enabled, e.created_at, e.updated_at,
         COALESCE(c.pending, 0)::int AS pending, COALESCE(c.delivered, 0)::int AS delivered, COALESCE(c.failed, 0)::int AS failed,
         l.at AS last_attempt_at, l.status_code AS last_status_code
    FROM webhook_endpoints e
    JOIN runtimes r ON r.id = e.runtime_id
    LEFT JOIN LATERAL (
      SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
             count(*) FILTER (WHERE status = 'delivered') AS delivered,
             count(*) FILTER (WHERE status = 'failed') AS failed
        FROM webhook_deliveries WHERE endpoint_id = e.id
    ) c ON true
    LEFT JOIN LATERAL (
      SELECT a.at, a.status_code FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
       WHERE d.endpoint_id = e.id ORDER BY a.at DESC LIMIT 1
    ) l ON true`;

function toInfo(row: EndpointRow): WebhookEndpointInfo {
  return {
    id: row.id,
    runtime: row.runtime,
    kind: row.kind,
    url: row.url,
    header_names: row.header_names,
    enabled: row.enabled,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deliveries: { pending: row.pending, delivered: row.delivered, failed: row.failed },
    last_attempt_at: row.last_attempt_at,
    last_status_code: row.last_status_code,
  };
}

/** Every endpoint, by runtime then age. */
export async function listWebhookEndpoints(db: Db): Promise<WebhookEndpointInfo[]> {
  const rows = await db.driver.query<EndpointRow>(`${SELECT_ENDPOINTS} ORDER BY r.name, e.created_at`);
  return rows.map(toInfo);
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function getWebhookEndpoint(db: Db, id: string): Promise<WebhookEndpointInfo> {
  const rows = uuid.test(id)
    ? await db.driver.query<EndpointRow>(`${SELECT_ENDPOINTS} WHERE e.id = $1::uuid`, [id])
    : [];
  if (!rows[0]) throw new ApiError("NOT_FOUND", `No webhook endpoint ${id}.`);
  return toInfo(rows[0]);
}

type SaveOptions = { lookup?: LookupFn };

/**
 * Refuses a URL that reaches Settle's own machine or network (SSRF), as a webhook endpoint's or a notification
 * channel's (`what`) is saved. It is checked again before every try, on the addresses the name has then.
 */
export async function assertSafeUrl(url: string, what: string, options: SaveOptions = {}): Promise<void> {
  const check = await checkWebhookUrl(url, {
    allowPrivate: env().SETTLE_WEBHOOK_ALLOW_PRIVATE,
    lookup: options.lookup,
  });
  if (!check.ok) throw new ApiError("UNSAFE_URL", `${what} ${check.message}.`, { field: "url", rule: check.rule });
}

/** What the admin audit keeps of an endpoint: never its secret, nor its headers' values. */
function snapshotOf(
  endpoint: Pick<WebhookEndpointInfo, "url" | "enabled" | "runtime"> &
    Partial<Pick<WebhookEndpointInfo, "kind" | "header_names">>,
): Record<string, unknown> {
  const otlp = endpoint.kind === "otlp" ? { kind: "otlp", header_names: endpoint.header_names ?? [] } : {};
  return { url: endpoint.url, enabled: endpoint.enabled, runtime: endpoint.runtime, ...otlp };
}

export async function createWebhookEndpoint(
  db: Db,
  input: z.input<typeof newWebhookEndpointSchema>,
  actor: string,
  options: SaveOptions = {},
): Promise<{ endpoint: WebhookEndpointInfo; secret: string }> {
  const runtime = await db.prisma.runtime.findUnique({ where: { name: input.runtime } });
  if (!runtime) {
    throw new ApiError(
      "INVALID_REQUEST",
      `No runtime ${input.runtime}: a runtime exists once it has a key (Admin → Runtime keys).`,
      { path: "runtime" },
    );
  }
  await assertSafeUrl(input.url, "The webhook URL", options);
  const secret = newWebhookSecret();
  const created = await db.driver.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string; url: string; enabled: boolean }>(
      `INSERT INTO webhook_endpoints (id, runtime_id, url, secret, kind, headers)
       VALUES (gen_random_uuid(), $1::uuid, $2, $3, $4, $5::jsonb) RETURNING id, url, enabled`,
      [runtime.id, input.url, secret, input.kind ?? "webhook", JSON.stringify(input.headers ?? {})],
    );
    await recordAdminAction(tx, {
      actor,
      action: "webhook_endpoint_created",
      targetType: "webhook_endpoint",
      targetId: row!.id,
      after: snapshotOf({
        url: row!.url,
        enabled: row!.enabled,
        runtime: runtime.name,
        kind: input.kind ?? "webhook",
        header_names: Object.keys(input.headers ?? {}).sort(),
      }),
    });
    return row!;
  });
  return { endpoint: await getWebhookEndpoint(db, created.id), secret };
}

export async function updateWebhookEndpoint(
  db: Db,
  id: string,
  patch: z.infer<typeof webhookEndpointPatchSchema>,
  actor: string,
  options: SaveOptions = {},
): Promise<WebhookEndpointInfo> {
  const before = await getWebhookEndpoint(db, id);
  if (patch.headers !== undefined && before.kind !== "otlp") {
    throw new ApiError(
      "INVALID_REQUEST",
      "headers are for otlp endpoints: a webhook's deliveries are signed instead.",
      {
        path: "headers",
      },
    );
  }
  if (patch.url !== undefined) await assertSafeUrl(patch.url, "The webhook URL", options);
  await db.driver.transaction(async (tx) => {
    // null leaves a field as it is; headers are replaced whole.
    const [row] = await tx.query<{ url: string; enabled: boolean; header_names: string[] }>(
      `UPDATE webhook_endpoints SET url = COALESCE($2, url), enabled = COALESCE($3, enabled),
              headers = COALESCE($4::jsonb, headers), updated_at = now()
        WHERE id = $1::uuid
       RETURNING url, enabled, ARRAY(SELECT jsonb_object_keys(headers) ORDER BY 1) AS header_names`,
      [
        id,
        patch.url ?? null,
        patch.enabled ?? null,
        patch.headers === undefined ? null : JSON.stringify(patch.headers),
      ],
    );
    if (!row) throw new ApiError("NOT_FOUND", `No webhook endpoint ${id}.`);
    await recordAdminAction(tx, {
      actor,
      action: "webhook_endpoint_updated",
      targetType: "webhook_endpoint",
      targetId: id,
      before: snapshotOf(before),
      after: {
        ...snapshotOf({ ...before, url: row.url, enabled: row.enabled, header_names: row.header_names }),
        // The values stay out, as at creation: that they were replaced is the entry (the names may be the same).
        ...(patch.headers === undefined ? {} : { header_values: "replaced" }),
      },
    });
  });
  return getWebhookEndpoint(db, id);
}

/** A new secret at once: deliveries from now on (retries included) are signed with it. */
export async function rotateWebhookSecret(
  db: Db,
  id: string,
  actor: string,
): Promise<{ endpoint: WebhookEndpointInfo; secret: string }> {
  const before = await getWebhookEndpoint(db, id);
  const secret = newWebhookSecret();
  await db.driver.transaction(async (tx) => {
    const rotated = await tx.query(
      `UPDATE webhook_endpoints SET secret = $2, updated_at = now() WHERE id = $1::uuid RETURNING id`,
      [id, secret],
    );
    if (rotated.length === 0) throw new ApiError("NOT_FOUND", `No webhook endpoint ${id}.`);
    // Which secret it was and is stays out of the audit: that the secret changed is the entry.
    await recordAdminAction(tx, {
      actor,
      action: "webhook_secret_rotated",
      targetType: "webhook_endpoint",
      targetId: id,
      before: snapshotOf(before),
      after: snapshotOf(before),
    });
  });
  return { endpoint: await getWebhookEndpoint(db, id), secret };
}

/** Deletes the endpoint with its deliveries and their log. */
export async function deleteWebhookEndpoint(db: Db, id: string, actor: string): Promise<{ deleted: true }> {
  const before = await getWebhookEndpoint(db, id);
  const deleted = await deleteAudited(db, "webhook_endpoints", {
    actor,
    action: "webhook_endpoint_deleted",
    targetType: "webhook_endpoint",
    targetId: id,
    before: snapshotOf(before),
  });
  // Deleted by someone else since it was read: theirs is the entry.
  if (!deleted) throw new ApiError("NOT_FOUND", `No webhook endpoint ${id}.`);
  return { deleted: true };
}
