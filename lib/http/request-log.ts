import { log } from "../observability/log";
import type { Principal } from "../identity/principal";
import { observeRequest } from "../observability/metrics";
import { routeLabel } from "../observability/route-label";

// Every API request, once it is answered: one JSON log line and one
// observation of the latency histogram. Both name the route by the template
// the registry declares (/api/v1/invocations/{invocation_id}: route-label.ts),
// so neither an id nor any other text of the path becomes a metric label, and
// neither ever holds a header, a query string or a body: no key, token or
// caller's text reaches the log.

/** Who called, for the log: a runtime by name, a person by id (an email is personal data a log need not hold). */
export const logLabel = (principal: Principal): string =>
  principal.kind === "runtime" ? `runtime:${principal.runtime.name}` : `user:${principal.user.id}`;

export function logRequest(
  req: Request,
  response: Response,
  facts: { requestId: string; started: number; principal: string | null },
): void {
  const seconds = (performance.now() - facts.started) / 1000;
  const route = routeLabel(new URL(req.url).pathname);
  observeRequest(req.method, route, response.status, seconds);
  const line = {
    request_id: facts.requestId,
    method: req.method,
    route,
    status: response.status,
    duration_ms: Math.round(seconds * 1000 * 10) / 10,
    principal: facts.principal,
  };
  if (response.status >= 500) log.error(line, "request");
  else log.info(line, "request");
}
