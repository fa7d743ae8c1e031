import { describe, expect, it } from "vitest";
import { routeTemplate } from "./request-log";

// The log's and the latency histogram's route label: the template, never an id (ids would make a metric per call).
describe("routeTemplate", () => {
  it.each([
    ["/api/v1/envelopes", {}, "/api/v1/envelopes"],
    [
      "/api/v1/invocations/inv-7f3/decision",
      { invocation_id: "inv-7f3" },
      "/api/v1/invocations/{invocation_id}/decision",
    ],
    [
      "/api/v1/invocations/log%2F1/decision",
      { invocation_id: "log/1" },
      "/api/v1/invocations/{invocation_id}/decision",
    ],
    [
      "/api/v1/admin/webhooks/e-1/deliveries/d-2/resend",
      { endpoint_id: "e-1", delivery_id: "d-2" },
      "/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend",
    ],
    ["/api/v1/tasks/%E0%A4%A", { task_id: "x" }, "/api/v1/tasks/%E0%A4%A"],
  ])("%s → its template", (path, params, template) => {
    expect(routeTemplate(path, params)).toBe(template);
  });
});
