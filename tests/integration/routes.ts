import { apiRoutes } from "@/server/routes";

// The route handlers integration tests call directly, by the registry's paths (server/routes.ts).

export const ingest = apiRoutes["/api/v1/envelopes"].POST;
export const getInvocation = apiRoutes["/api/v1/invocations/{invocation_id}"].GET;
export const listInvocations = apiRoutes["/api/v1/invocations"].GET;
export const getTask = apiRoutes["/api/v1/tasks/{task_id}"].GET;
export const health = apiRoutes["/api/health"].GET;
export const openapi = apiRoutes["/api/v1/openapi.json"].GET;
export const guard = apiRoutes["/api/v1/guard"].POST;
export const getDecision = apiRoutes["/api/v1/invocations/{invocation_id}/decision"].GET;
export const invocationActions = apiRoutes["/api/v1/invocations/{invocation_id}/actions"].POST;
export const ownToolCatalog = apiRoutes["/api/v1/tool-catalog"].GET;
export const otlpTraces = apiRoutes["/v1/traces"].POST;
export const apiOtlpTraces = apiRoutes["/api/v1/otlp/v1/traces"].POST;
export const queue = apiRoutes["/api/v1/queue"].GET;
export const taskTimeline = apiRoutes["/api/v1/tasks/{task_id}/timeline"].GET;
export const metrics = apiRoutes["/api/v1/metrics"].GET;
export const live = apiRoutes["/api/health/live"].GET;
export const ready = apiRoutes["/api/health/ready"].GET;
export const prometheus = apiRoutes["/api/metrics"].GET;
