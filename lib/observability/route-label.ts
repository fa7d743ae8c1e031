import { processWide } from "../process-wide";

// The route a request is counted and logged under: the template its route declares in the registry
// (server/routes.ts registers them as it loads), matched against the path as sent — never the path itself, and
// never worked out from the parameters a route read: a request refused before its parameters are read (no key,
// 401) has none, and its raw path once became a metric label, so any caller could mint series without bound.
// A path no registered template matches is one constant label.

/** The label of a path no registered route declares (or of any path before the registry has loaded). */
export const UNROUTED_LABEL = "unrouted";

type Template = { template: string; pattern: RegExp };

/** `/api/v1/invocations/{invocation_id}` as a pattern of the raw path: each `{name}` one segment, %-escapes and all. */
export function templatePattern(template: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template
    .split("/")
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(param[1]!);
      return "([^/]+)";
    })
    .join("/");
  return { pattern: new RegExp(`^${source}$`), names };
}

const registered = () => processWide("routeTemplates", () => ({ templates: [] as Template[] }));

/** Called by the route registry with every path it declares. */
export function registerRouteTemplates(templates: readonly string[]): void {
  registered().templates = templates.map((template) => ({ template, pattern: templatePattern(template).pattern }));
}

/** The declared template this path (no query) is served under, or UNROUTED_LABEL. */
export function routeLabel(pathname: string): string {
  for (const { template, pattern } of registered().templates) if (pattern.test(pathname)) return template;
  return UNROUTED_LABEL;
}
