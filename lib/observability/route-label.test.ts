import { describe, expect, it } from "vitest";
import { registerRouteTemplates, routeLabel, UNROUTED_LABEL } from "./route-label";

// The log's and the latency histogram's route label: the declared template, never an id or any other text of
// the path (each would be a new series), and one constant for a path no route declares.
describe("routeLabel", () => {
  registerRouteTemplates([
    "/api/v1/envelopes",
    "/api/v1/invocations/{invocation_id}",
    "/api/v1/invocations/{invocation_id}/decision",
    "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend",
    "/api/v1/tasks/{task_id}",
  ]);
  it.each([
    ["/api/v1/envelopes", "/api/v1/envelopes"],
    ["/api/v1/invocations/inv-7f3/decision", "/api/v1/invocations/{invocation_id}/decision"],
    ["/api/v1/invocations/log%2F1/decision", "/api/v1/invocations/{invocation_id}/decision"],
    [`/api/v1/invocations/${"x".repeat(8_000)}/decision`, "/api/v1/invocations/{invocation_id}/decision"],
    [
      "/api/v1/admin/webhooks/e-1/deliveries/d-2/resend",
      "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend",
    ],
    ["/api/v1/tasks/%E0%A4%A", "/api/v1/tasks/{task_id}"],
    ["/api/v1/invocations/a/b/decision", UNROUTED_LABEL],
    ["/api/v1/envelopes/", UNROUTED_LABEL],
    ["/api/v1/invoc%61tions/x", UNROUTED_LABEL],
    [`/api/v1/${"y".repeat(500)}`, UNROUTED_LABEL],
  ])("%s → its template", (path, template) => {
    expect(routeLabel(path)).toBe(template);
  });
});
