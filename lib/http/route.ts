import { randomBytes } from "node:crypto";
import { z } from "zod";
import { getDb, MigrationsPendingError, type Db } from "../db/client";
import { inSettingsScope } from "../db/settings-version";
import { isDatabaseUnavailable, sqlState } from "../db/errors";
import { readBodyLimited } from "./read-body";
import { logLabel, logRequest } from "./request-log";
import { log } from "../observability/log";
import { cleanText } from "../redact/redact";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../json/depth";
import { mayHoldLongInteger, parseExactJson, roundBigInts, stringifyExactJson } from "../json/exact";
import type { Permission } from "../identity/roles";
import {
  authenticate,
  type AuthMode,
  type Principal,
  type RuntimePrincipal,
  type UserPrincipal,
} from "../identity/principal";
import { ApiError, errorEnvelope, statusOf, type ErrorCode } from "../errors";

// The one wrapper every API route goes through: it authenticates, parses
// params and query with zod, runs one lib/ function and maps every failure to
// Settle's error envelope — never an HTML page, never a bare 500.

type RouteContext = { params: Promise<Record<string, string | string[]>> };

type Auth = AuthMode | false;
type PrincipalFor<A extends Auth> = A extends "runtime"
  ? RuntimePrincipal
  : A extends "user" | "session"
    ? UserPrincipal
    : A extends "any"
      ? Principal
      : null;

type Handler<P, Q, A extends Auth, B> = (ctx: {
  req: Request;
  db: Db;
  principal: PrincipalFor<A>;
  params: P;
  query: Q;
  body: B;
  requestId: string;
}) => Promise<Response | unknown>;

/** The methods a route module may export. */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** One answer a route gives besides its errors: a JSON body, other media types, headers, or no body at all (a 304). */
export type ResponseSpec = {
  description?: string;
  /** The application/json body; left out, the answer has none. */
  schema?: z.ZodType;
  /** Other media types the same status can carry, e.g. text/csv. */
  content?: Record<string, z.ZodType>;
  /** Response headers it carries: name → what it holds. */
  headers?: Record<string, string>;
};
/** What a route answers when it succeeds: a schema (for 200), or status → schema or spec (201, 207, 304…). */
export type ResponseDecl = z.ZodType | { [status: number]: z.ZodType | ResponseSpec };

/**
 * What a route declares about itself, once: the wrapper enforces auth,
 * permission, params, query and body; the OpenAPI document
 * (server/openapi.ts) and the typed client (server/api-client.ts) are
 * built from all of it.
 */
type Options<P, Q, QI, A extends Auth, B, BI, C extends Content | undefined, R extends ResponseDecl | undefined> = {
  auth: A;
  /** What a person must be allowed to do (runtime keys are scoped to their runtime instead). */
  permission?: Permission;
  /** One line: what the operation does. */
  summary: string;
  /** More, when the summary is not enough (Markdown). */
  description?: string;
  /** Groups for the OpenAPI document. */
  tags?: string[];
  /** The error codes it answers with beyond the ones its auth, inputs and database bring (see commonErrors). */
  errors?: ErrorCode[];
  /** false for routes that must answer without a database (the OpenAPI document). */
  database?: boolean;
  /**
   * A route the runtime calls on every tool call: `npm start` serves it without Next.js's request
   * pipeline (server/fast-lane.ts, decision 024), with this same handler.
   */
  hot?: boolean;
  /** Answers a person whose password must change (an admin's temporary one): only the route that changes it. */
  whilePasswordMustChange?: boolean;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q, QI>;
  /** A JSON body (at most 64 KiB), parsed with this schema. */
  body?: z.ZodType<B, BI>;
  /**
   * The body's members whose integers keep every digit (BigInts past 2^53, lib/json): a caller's values a
   * person is shown or a digest reads (the guard's `arguments`). Everywhere else they are numbers, as JSON.parse reads them.
   */
  exactIn?: readonly string[];
  /** A body the handler reads itself (ingest's NDJSON): media type → schema, described and typed but not parsed here. */
  requestContent?: C;
  /** Its successful answers. */
  response?: R;
  handler: Handler<P, Q, A, B>;
};
type Content = Record<string, z.ZodType>;

/** The most a JSON body may be (also an /api/auth/* body: lib/http/auth-handler.ts). */
export const MAX_JSON_BODY = 64 * 1024;

/**
 * Every string a request carries, as Settle stores text: NUL and lone
 * surrogates (which PostgreSQL cannot hold) become U+FFFD. Ids were stored so
 * at ingest, so a lookup with the raw form still finds them.
 */
function cleanStrings(value: unknown): unknown {
  if (typeof value === "string") return cleanText(value);
  if (Array.isArray(value)) return value.map(cleanStrings);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleanText(k), cleanStrings(v)]));
  }
  return value;
}

/** Integers past 2^53 keep their digits only under the members named, after the depth check (the rounding recurses). */
function keepDigitsIn(parsed: unknown, members: readonly string[]): unknown {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return roundBigInts(parsed);
  const record = parsed as Record<string, unknown>;
  const rounded = roundBigInts(record);
  for (const m of members) if (Object.hasOwn(record, m)) rounded[m] = record[m];
  return rounded;
}

async function readJson(req: Request, exactIn: readonly string[]): Promise<unknown> {
  const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
  const text = await readBodyLimited(req, MAX_JSON_BODY, "Send less in one request.");
  const exact = exactIn.length > 0 && mayHoldLongInteger(text);
  let parsed: unknown;
  try {
    parsed = exact ? parseExactJson(text) : JSON.parse(text);
  } catch {
    throw new ApiError("INVALID_JSON", "The body is not valid JSON.");
  }
  // Measured without recursion, before cleanStrings and the schema walk it recursively.
  if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) {
    throw new ApiError(
      "INVALID_REQUEST",
      `The body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`,
      { limit_depth: MAX_JSON_DEPTH },
    );
  }
  return cleanStrings(exact ? keepDigitsIn(parsed, exactIn) : parsed);
}

/** Every answer: a caller's integer past 2^53 read back exactly (a BigInt, lib/json) is written with all its digits. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(stringifyExactJson(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers },
  });
}

export function errorResponse(
  code: ErrorCode,
  message: string,
  requestId: string,
  details: Record<string, unknown> = {},
): Response {
  return json(errorEnvelope(code, message, requestId, details), statusOf(code), { "x-request-id": requestId });
}

function requestIdOf(req: Request): string {
  const given = req.headers.get("x-request-id");
  return given && /^[\w.:-]{1,128}$/.test(given) ? given : `req_${randomBytes(9).toString("base64url")}`;
}

export function toErrorResponse(error: unknown, requestId: string): Response {
  if (error instanceof ApiError) return errorResponse(error.code, error.message, requestId, error.safeDetails);
  if (error instanceof z.ZodError) {
    const issue = error.issues[0];
    return errorResponse("INVALID_REQUEST", `${issue?.path.join(".") || "request"}: ${issue?.message}`, requestId, {
      issues: error.issues.slice(0, 10).map((i) => ({ path: i.path.join("."), message: i.message })),
    });
  }
  if (error instanceof MigrationsPendingError) return errorResponse("MIGRATIONS_PENDING", error.message, requestId);
  // A value the database refused (class 22, data exception) is the request's, not Settle's: every
  // input is checked before it gets there, so this is the net under those checks.
  if (sqlState(error)?.startsWith("22")) {
    log.error({ request_id: requestId, err: error }, "a request value reached the database unchecked");
    return errorResponse(
      "INVALID_REQUEST",
      "A value in this request is outside what Settle can store; nothing was changed.",
      requestId,
    );
  }
  if (isDatabaseUnavailable(error)) {
    return errorResponse(
      "DATABASE_UNAVAILABLE",
      "Settle could not reach its database. Nothing from this request was stored; send it again after not_before (ingest is idempotent by event_id).",
      requestId,
    );
  }
  log.error({ request_id: requestId, err: error }, "unexpected failure");
  return errorResponse(
    "INTERNAL",
    "Settle failed unexpectedly. If this was an ingest request, sending it again is safe: records are idempotent by event_id.",
    requestId,
  );
}

/** The types a route's declaration carries to the typed client: never present at run time. */
export type RouteTypes = {
  params: unknown;
  query: unknown;
  body: unknown;
  content: Content | undefined;
  response: ResponseDecl | undefined;
};

/**
 * What a route declares, attached to its handler as `.route`: read by the
 * authorization matrix test (auth, permission), the OpenAPI document and the
 * typed client.
 */
export type RouteMeta<T extends RouteTypes = RouteTypes> = {
  auth: Auth;
  permission: Permission | null;
  summary: string;
  description: string | null;
  tags: string[];
  /** Declared codes only; commonErrors(meta, method) adds the ones every such route can answer. */
  errors: ErrorCode[];
  database: boolean;
  hot: boolean;
  params: z.ZodType | null;
  query: z.ZodType | null;
  body: z.ZodType | null;
  requestContent: Content | null;
  response: ResponseDecl | null;
  /** Types only, for server/api-client.ts. */
  readonly types?: T;
};
export type RouteHandler<T extends RouteTypes = RouteTypes> = ((
  req: Request,
  context?: RouteContext,
) => Promise<Response>) & { route: RouteMeta<T> };

export function withRoute<
  P = Record<string, never>,
  Q = Record<string, never>,
  A extends Auth = "runtime",
  B = undefined,
  QI = undefined,
  BI = undefined,
  C extends Content | undefined = undefined,
  R extends ResponseDecl | undefined = undefined,
>(
  options: Options<P, Q, QI, A, B, BI, C, R>,
): RouteHandler<{ params: P; query: QI; body: BI; content: C; response: R }> {
  const serve = async (req: Request, context?: RouteContext): Promise<Response> => {
    const started = performance.now();
    const requestId = requestIdOf(req);
    let principalName: string | null = null;
    const done = (response: Response) => {
      logRequest(req, response, { requestId, started, principal: principalName });
      return response;
    };
    try {
      const db = options.database === false ? (null as unknown as Db) : await getDb();
      const principal = (
        options.auth
          ? await authenticate(db, req, options.auth, options.permission, options.whilePasswordMustChange === true)
          : null
      ) as PrincipalFor<A>;
      principalName = principal ? logLabel(principal as Principal) : null;
      const rawParams = (context ? cleanStrings(await context.params) : null) ?? {};
      const params = options.params ? options.params.parse(rawParams) : ({} as P);
      const query = options.query
        ? options.query.parse(cleanStrings(Object.fromEntries(new URL(req.url).searchParams)))
        : ({} as Q);
      const body = options.body ? options.body.parse(await readJson(req, options.exactIn ?? [])) : (undefined as B);
      const result = await options.handler({ req, db, principal, params, query, body, requestId });
      if (result instanceof Response) {
        result.headers.set("x-request-id", requestId);
        return done(result);
      }
      return done(json(result, 200, { "x-request-id": requestId }));
    } catch (error) {
      return done(toErrorResponse(error, requestId));
    }
  };
  // Each request in its own settings scope: what it reads of the settings version decides which kept
  // copies of the catalog and policies it may use (lib/db/settings-version.ts).
  const handle = (req: Request, context?: RouteContext): Promise<Response> =>
    inSettingsScope(() => serve(req, context));
  const route: RouteMeta<{ params: P; query: QI; body: BI; content: C; response: R }> = {
    auth: options.auth,
    permission: options.permission ?? null,
    summary: options.summary,
    description: options.description ?? null,
    tags: options.tags ?? [],
    errors: options.errors ?? [],
    database: options.database !== false,
    hot: options.hot === true,
    params: options.params ?? null,
    query: options.query ?? null,
    body: options.body ?? null,
    requestContent: options.requestContent ?? null,
    response: options.response ?? null,
  };
  return Object.assign(handle, { route });
}

const SAFE_METHODS: ReadonlySet<Method> = new Set(["GET"]);

/**
 * The error codes a route can answer with because of what it declares, before
 * its own: who may call it, its inputs, its database, and Settle failing.
 */
export function commonErrors(meta: RouteMeta, method: Method): ErrorCode[] {
  const codes: ErrorCode[] = [];
  if (meta.auth) {
    codes.push("UNAUTHENTICATED", "KEY_REVOKED", "TOKEN_EXPIRED", "FORBIDDEN");
    if (meta.auth !== "runtime" && !SAFE_METHODS.has(method)) codes.push("INVALID_ORIGIN");
  }
  if (meta.params || meta.query || meta.body || meta.requestContent) codes.push("INVALID_REQUEST");
  if (meta.body) codes.push("INVALID_JSON", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE");
  if (meta.database) codes.push("DATABASE_UNAVAILABLE", "MIGRATIONS_PENDING");
  codes.push("INTERNAL");
  return codes;
}

/** A method a route does not serve answers 405 with the error envelope, not an empty body. */
export function otherMethods(...allowed: Method[]): Record<Method, (req: Request) => Response> {
  const refuse = (req: Request) => {
    const res = errorResponse(
      "METHOD_NOT_ALLOWED",
      `${req.method} is not supported here; use ${allowed.join(" or ")}.`,
      requestIdOf(req),
      { allowed },
    );
    res.headers.set("allow", allowed.join(", "));
    return res;
  };
  return { GET: refuse, POST: refuse, PUT: refuse, PATCH: refuse, DELETE: refuse };
}
