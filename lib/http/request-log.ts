import { log } from "../observability/log";
import type { Principal } from "../identity/principal";
import { observeRequest } from "../observability/metrics";

// Every API request, once it is answered: one JSON log line and one
// observation of the latency histogram. Both name the route by its template
// (/api/v1/invocations/{invocation_id}), so ids never become metric labels,
// and neither ever holds a header, a query string or a body: no key, token
// or caller's text reaches the log.

/** Who called, for the log: a runtime by name, a person by id (an email is personal data a log need not hold). */
export const logLabel = (principal: Principal): string =>
  principal.kind === "runtime" ? `runtime:${principal.runtime.name}` : `user:${principal.user.id}`;

/** The request's path with each route parameter's segment put back as `{name}`. */
export function routeTemplate(pathname: string, params: Record<string, string>): string {
  const names = new Map(Object.entries(params).map(([name, value]) => [value, name]));
  if (names.size === 0) return pathname;
  return pathname
    .split("/")
    .map((segment) => {
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // a segment that does not decode is kept as it came
      }
      const name = names.get(decoded);
      return name === undefined ? segment : `{${name}}`;
    })
    .join("/");
}

export function logRequest(
  req: Request,
  response: Response,
  facts: { requestId: string; started: number; params: Record<string, string>; principal: string | null },
): void {
  const seconds = (performance.now() - facts.started) / 1000;
  const route = routeTemplate(new URL(req.url).pathname, facts.params);
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
