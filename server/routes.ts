import type { Method, RouteHandler } from "@/lib/http/route";
import { registerRouteTemplates, templatePattern } from "@/lib/observability/route-label";
import * as envelopes from "@/app/api/v1/envelopes/route";
import * as otlpTraces from "@/app/v1/traces/route";
import * as apiOtlpTraces from "@/app/api/v1/otlp/v1/traces/route";
import * as invocations from "@/app/api/v1/invocations/route";
import * as invocation from "@/app/api/v1/invocations/[invocation_id]/route";
import * as invocationAttempts from "@/app/api/v1/invocations/[invocation_id]/attempts/route";
import * as invocationActions from "@/app/api/v1/invocations/[invocation_id]/actions/route";
import * as invocationDecision from "@/app/api/v1/invocations/[invocation_id]/decision/route";
import * as invocationDuplicateReview from "@/app/api/v1/invocations/[invocation_id]/duplicate-review/route";
import * as invocationNotDuplicate from "@/app/api/v1/invocations/[invocation_id]/not-duplicate/route";
import * as invocationArgumentsReview from "@/app/api/v1/invocations/[invocation_id]/arguments-review/route";
import * as invocationVerification from "@/app/api/v1/invocations/[invocation_id]/verification/route";
import * as invocationEvidence from "@/app/api/v1/invocations/[invocation_id]/evidence/route";
import * as evidenceKeys from "@/app/api/v1/evidence-keys/route";
import * as verifications from "@/app/api/v1/verifications/route";
import * as verification from "@/app/api/v1/verifications/[verification_id]/route";
import * as guard from "@/app/api/v1/guard/route";
import * as task from "@/app/api/v1/tasks/[task_id]/route";
import * as taskTimeline from "@/app/api/v1/tasks/[task_id]/timeline/route";
import * as queue from "@/app/api/v1/queue/route";
import * as queueIds from "@/app/api/v1/queue/ids/route";
import * as bulkActions from "@/app/api/v1/bulk-actions/route";
import * as savedViews from "@/app/api/v1/saved-views/route";
import * as savedView from "@/app/api/v1/saved-views/[id]/route";
import * as audit from "@/app/api/v1/audit/route";
import * as metrics from "@/app/api/v1/metrics/route";
import * as metricCases from "@/app/api/v1/metrics/cases/route";
import * as users from "@/app/api/v1/admin/users/route";
import * as user from "@/app/api/v1/admin/users/[user_id]/route";
import * as runtimeKeys from "@/app/api/v1/admin/runtime-keys/route";
import * as runtimeKeyRevoke from "@/app/api/v1/admin/runtime-keys/[prefix]/revoke/route";
import * as toolCatalog from "@/app/api/v1/admin/tool-catalog/route";
import * as toolCatalogEntry from "@/app/api/v1/admin/tool-catalog/[entry_id]/route";
import * as runtimeToolCatalog from "@/app/api/v1/tool-catalog/route";
import * as myTokens from "@/app/api/v1/me/tokens/route";
import * as myTokenRevoke from "@/app/api/v1/me/tokens/[prefix]/revoke/route";
import * as policies from "@/app/api/v1/policies/route";
import * as policy from "@/app/api/v1/policies/[effect_class]/route";
import * as retention from "@/app/api/v1/retention/route";
import * as runtimeRetention from "@/app/api/v1/retention/runtimes/[runtime]/route";
import * as webhooks from "@/app/api/v1/admin/webhooks/route";
import * as webhook from "@/app/api/v1/admin/webhooks/[endpoint_id]/route";
import * as webhookRotateSecret from "@/app/api/v1/admin/webhooks/[endpoint_id]/rotate-secret/route";
import * as webhookDeliveries from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/route";
import * as webhookDelivery from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/[delivery_id]/route";
import * as webhookDeliveryResend from "@/app/api/v1/admin/webhooks/[endpoint_id]/deliveries/[delivery_id]/resend/route";
import * as slackSettings from "@/app/api/v1/admin/integrations/slack/route";
import * as mySlackLinks from "@/app/api/v1/me/slack-links/route";
import * as mySlackLinkConfirm from "@/app/api/v1/me/slack-links/confirm/route";
import * as slackInteractions from "@/app/api/v1/integrations/slack/interactions/route";
import * as slackCommands from "@/app/api/v1/integrations/slack/commands/route";
import * as mySlackCommandCode from "@/app/api/v1/me/slack-links/command-code/route";
import * as slackLinks from "@/app/api/v1/admin/slack-links/route";
import * as slackLink from "@/app/api/v1/admin/slack-links/[slack_user_id]/route";
import * as mySlackLink from "@/app/api/v1/me/slack-links/[slack_user_id]/route";
import * as notificationChannels from "@/app/api/v1/admin/notifications/route";
import * as notificationChannel from "@/app/api/v1/admin/notifications/[channel_id]/route";
import * as notificationMessages from "@/app/api/v1/admin/notifications/[channel_id]/messages/route";
import * as notificationMessage from "@/app/api/v1/admin/notifications/[channel_id]/messages/[message_id]/route";
import * as notificationMessageResend from "@/app/api/v1/admin/notifications/[channel_id]/messages/[message_id]/resend/route";
import * as myPassword from "@/app/api/v1/me/password/route";
import * as userPasswordReset from "@/app/api/v1/admin/users/[user_id]/password-reset/route";
import * as passwordResets from "@/app/api/v1/password-resets/route";
import * as health from "@/app/api/health/route";
import * as healthLive from "@/app/api/health/live/route";
import * as healthReady from "@/app/api/health/ready/route";
import * as prometheus from "@/app/api/metrics/route";
import * as openApi from "@/app/api/v1/openapi.json/route";

// Every API route module, by the path it serves (all under /api, but for
// OTLP's own /v1/traces, served from app/v1 where exporters look for it) ({param} for a [param]
// folder), in the order the OpenAPI document lists them. Each module's
// withRoute exports carry their declaration as `.route`; the document
// (server/openapi.ts) and the typed client (server/api-client.ts, types
// only) are built from them. tests/integration/openapi.test.ts fails when an
// app/api/**/route.ts is missing here or listed under another path.
//
// Not here: app/api/[...path] (the catch-all 404) and app/api/auth/[...all]
// (Better Auth's own endpoints). The OpenAPI route imports the document
// lazily, so listing it here is no import cycle.

export const apiRoutes = {
  "/api/v1/envelopes": envelopes,
  "/v1/traces": otlpTraces,
  "/api/v1/otlp/v1/traces": apiOtlpTraces,
  "/api/v1/invocations": invocations,
  "/api/v1/invocations/{invocation_id}": invocation,
  "/api/v1/invocations/{invocation_id}/attempts": invocationAttempts,
  "/api/v1/invocations/{invocation_id}/actions": invocationActions,
  "/api/v1/invocations/{invocation_id}/decision": invocationDecision,
  "/api/v1/invocations/{invocation_id}/duplicate-review": invocationDuplicateReview,
  "/api/v1/invocations/{invocation_id}/not-duplicate": invocationNotDuplicate,
  "/api/v1/invocations/{invocation_id}/arguments-review": invocationArgumentsReview,
  "/api/v1/invocations/{invocation_id}/verification": invocationVerification,
  "/api/v1/invocations/{invocation_id}/evidence": invocationEvidence,
  "/api/v1/evidence-keys": evidenceKeys,
  "/api/v1/guard": guard,
  "/api/v1/verifications": verifications,
  "/api/v1/verifications/{verification_id}": verification,
  "/api/v1/tasks/{task_id}": task,
  "/api/v1/tasks/{task_id}/timeline": taskTimeline,
  "/api/v1/queue": queue,
  "/api/v1/queue/ids": queueIds,
  "/api/v1/bulk-actions": bulkActions,
  "/api/v1/saved-views": savedViews,
  "/api/v1/saved-views/{id}": savedView,
  "/api/v1/audit": audit,
  "/api/v1/metrics": metrics,
  "/api/v1/metrics/cases": metricCases,
  "/api/v1/admin/users": users,
  "/api/v1/admin/users/{user_id}": user,
  "/api/v1/admin/runtime-keys": runtimeKeys,
  "/api/v1/admin/runtime-keys/{prefix}/revoke": runtimeKeyRevoke,
  "/api/v1/admin/tool-catalog": toolCatalog,
  "/api/v1/admin/tool-catalog/{entry_id}": toolCatalogEntry,
  "/api/v1/tool-catalog": runtimeToolCatalog,
  "/api/v1/me/tokens": myTokens,
  "/api/v1/me/tokens/{prefix}/revoke": myTokenRevoke,
  "/api/v1/policies": policies,
  "/api/v1/policies/{effect_class}": policy,
  "/api/v1/retention": retention,
  "/api/v1/retention/runtimes/{runtime}": runtimeRetention,
  "/api/v1/admin/webhooks": webhooks,
  "/api/v1/admin/webhooks/{endpoint_id}": webhook,
  "/api/v1/admin/webhooks/{endpoint_id}/rotate-secret": webhookRotateSecret,
  "/api/v1/admin/webhooks/{endpoint_id}/deliveries": webhookDeliveries,
  "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}": webhookDelivery,
  "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend": webhookDeliveryResend,
  "/api/v1/me/password": myPassword,
  "/api/v1/admin/users/{user_id}/password-reset": userPasswordReset,
  "/api/v1/password-resets": passwordResets,
  "/api/v1/admin/notifications": notificationChannels,
  "/api/v1/admin/notifications/{channel_id}": notificationChannel,
  "/api/v1/admin/notifications/{channel_id}/messages": notificationMessages,
  "/api/v1/admin/notifications/{channel_id}/messages/{message_id}": notificationMessage,
  "/api/v1/admin/notifications/{channel_id}/messages/{message_id}/resend": notificationMessageResend,
  "/api/v1/admin/integrations/slack": slackSettings,
  "/api/v1/admin/slack-links": slackLinks,
  "/api/v1/me/slack-links": mySlackLinks,
  "/api/v1/me/slack-links/confirm": mySlackLinkConfirm,
  "/api/v1/integrations/slack/interactions": slackInteractions,
  "/api/v1/integrations/slack/commands": slackCommands,
  "/api/v1/me/slack-links/command-code": mySlackCommandCode,
  "/api/v1/me/slack-links/{slack_user_id}": mySlackLink,
  "/api/v1/admin/slack-links/{slack_user_id}": slackLink,
  "/api/health": health,
  "/api/health/live": healthLive,
  "/api/health/ready": healthReady,
  "/api/metrics": prometheus,
  "/api/v1/openapi.json": openApi,
} as const;

// The latency histogram and the request log name a request by the template it matches here (lib/http/route-label.ts).
registerRouteTemplates(Object.keys(apiRoutes));

export type ApiRoutes = typeof apiRoutes;
export type ApiPath = keyof ApiRoutes;

/** The folders a route file may sit under without being listed above, and why. */
export const UNLISTED_ROUTE_FILES: Record<string, string> = {
  "app/api/[...path]/route.ts": "the catch-all: an unknown API path answers 404 with the error envelope",
  "app/api/auth/[...all]/route.ts": "Better Auth's own endpoints (sign-in, sign-out, session), not Settle's API",
};

/** One method of one registered path, as a server matches it. */
export type RouteEntry = {
  path: string;
  method: Method;
  pattern: RegExp;
  names: readonly string[];
  handler: RouteHandler;
};

const METHODS: readonly Method[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Every withRoute method of every registered path (a module's 405 answers from otherMethods are not among them). */
export const routeTable: readonly RouteEntry[] = Object.entries(apiRoutes).flatMap(([path, mod]) => {
  const { pattern, names } = templatePattern(path);
  return METHODS.flatMap((method) => {
    const handler = (mod as Partial<Record<Method, unknown>>)[method];
    return isRouteHandler(handler) ? [{ path, method, pattern, names, handler }] : [];
  });
});

function isRouteHandler(value: unknown): value is RouteHandler {
  return typeof value === "function" && "route" in value;
}

export type RouteMatch = { entry: RouteEntry; params: Record<string, string> };

/**
 * The entry serving this method and path (no query) among `entries`, with its path parameters decoded as
 * Next.js decodes them; null when none does or a parameter's %-escapes do not decode.
 */
export function matchRoute(entries: readonly RouteEntry[], method: string, path: string): RouteMatch | null {
  for (const entry of entries) {
    if (entry.method !== method) continue;
    const match = entry.pattern.exec(path);
    if (!match) continue;
    const params: Record<string, string> = {};
    try {
      entry.names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1]!)));
    } catch {
      return null;
    }
    return { entry, params };
  }
  return null;
}
