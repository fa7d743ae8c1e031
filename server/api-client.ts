import type { z } from "zod";
import type { ErrorEnvelope } from "@/lib/errors";
import type { ApiPath, ApiRoutes } from "./routes";
import type { Method, RouteTypes } from "@/lib/http/route";

// A typed client for Settle's API, typed from the same declarations the
// routes make in their withRoute calls (found through ./routes): the
// path, its {params}, the query, the body and each successful answer are
// z.input / z.output of the schemas the route parses and answers with, so a
// route whose declaration changes breaks its callers at compile time.
//
// Types only come from the routes: this module imports nothing from them at
// run time, so it is safe in the CLI and the browser alike. How a request is
// sent (retries, credentials) is the caller's ApiTransport.

/** The declared types of one operation. */
export type ApiRoute<P extends ApiPath, M extends ApiMethod<P>> = NonNullable<
  TypesOf<ApiRoutes[P][M & keyof ApiRoutes[P]]>
>;
type TypesOf<H> = H extends { route: { types?: infer T extends RouteTypes } } ? T : never;

/** The methods a path serves (its withRoute exports; otherMethods' 405s are not among them). */
export type ApiMethod<P extends ApiPath> = {
  [M in Method]: M extends keyof ApiRoutes[P] ? (ApiRoutes[P][M] extends { route: unknown } ? M : never) : never;
}[Method];

/** The paths that serve a method. */
export type ApiPathFor<M extends Method> = { [P in ApiPath]: M extends ApiMethod<P> ? P : never }[ApiPath];

/** A query value: what the schema takes, or anything a query string carries where it coerces (`limit`). */
type QueryIn<Q> = { [K in keyof Q]: unknown extends Q[K] ? string | number | boolean | undefined : Q[K] };
type ContentArg<C> =
  | {
      body: "application/json" extends keyof C ? z.input<C["application/json" & keyof C] & z.ZodType> : never;
      content?: undefined;
    }
  | { body?: undefined; content: { type: Exclude<keyof C, "application/json"> & string; text: string } };

type ParamsArg<T extends RouteTypes> = string extends keyof T["params"]
  ? { params?: undefined }
  : { params: T["params"] };
type QueryArg<T extends RouteTypes> = [T["query"]] extends [undefined]
  ? { query?: undefined }
  : object extends T["query"]
    ? { query?: QueryIn<T["query"]> }
    : { query: QueryIn<T["query"]> };
type BodyArg<T extends RouteTypes> = [T["body"]] extends [undefined]
  ? T["content"] extends Record<string, z.ZodType>
    ? ContentArg<T["content"]>
    : { body?: undefined; content?: undefined }
  : { body: T["body"]; content?: undefined };

/**
 * What one call takes: path params, query and body as the route declares them, headers (If-None-Match, say)
 * and a signal that abandons the request.
 */
export type ApiRequest<P extends ApiPath, M extends ApiMethod<P>> = ParamsArg<ApiRoute<P, M>> &
  QueryArg<ApiRoute<P, M>> &
  BodyArg<ApiRoute<P, M>> & { headers?: Record<string, string>; signal?: AbortSignal };

type Out<S> = S extends z.ZodType
  ? z.output<S>
  : S extends { schema: infer X extends z.ZodType }
    ? z.output<X>
    : undefined;
type SuccessOf<R> = R extends z.ZodType
  ? { status: 200; body: z.output<R> }
  : R extends Record<number, unknown>
    ? { [S in keyof R & number]: `${S}` extends `2${string}` ? { status: S; body: Out<R[S]> } : never }[keyof R &
        number]
    : { status: number; body: unknown };

/** A 2xx answer with its declared body, or anything else with the error envelope when there is one. */
export type ApiAnswer<P extends ApiPath, M extends ApiMethod<P>> =
  (SuccessOf<ApiRoute<P, M>["response"]> & { ok: true }) | ApiFailure;

/** Any answer but a 2xx, with Settle's error envelope when the body is one. */
export type ApiFailure = { ok: false; status: number; body: unknown; error: ErrorEnvelope | null };

/** A successful answer's body. */
export type ApiBody<P extends ApiPath, M extends ApiMethod<P>> = Extract<ApiAnswer<P, M>, { ok: true }>["body"];

/** Sends one request: `path` starts with `/` and carries the query string. */
export type ApiTransport = (request: {
  method: Method;
  path: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}) => Promise<{ status: number; body: unknown }>;

type Args<P extends ApiPath, M extends ApiMethod<P>> =
  object extends ApiRequest<P, M> ? [request?: ApiRequest<P, M>] : [request: ApiRequest<P, M>];
type Call<M extends Method> = <P extends ApiPathFor<M>>(
  path: P,
  ...args: Args<P, M & ApiMethod<P>>
) => Promise<ApiAnswer<P, M & ApiMethod<P>>>;

export type ApiClient = {
  request: <P extends ApiPath, M extends ApiMethod<P>>(
    method: M,
    path: P,
    ...args: Args<P, M>
  ) => Promise<ApiAnswer<P, M>>;
  get: Call<"GET">;
  post: Call<"POST">;
  put: Call<"PUT">;
  patch: Call<"PATCH">;
  delete: Call<"DELETE">;
};

type AnyRequest = {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  content?: { type: string; text: string };
  headers?: Record<string, string>;
  signal?: AbortSignal;
};

/** The path with its {params} filled in (URL-encoded) and the query appended; undefined and null query values are left out. */
export function apiPath(
  template: string,
  params: Record<string, string> = {},
  query: Record<string, unknown> = {},
): string {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${template} needs the path parameter ${name}.`);
    return encodeURIComponent(value);
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== null) search.set(name, String(value));
  const qs = search.toString();
  return qs ? `${path}?${qs}` : path;
}

function envelopeOf(body: unknown): ErrorEnvelope | null {
  const b = body as { ok?: unknown; code?: unknown } | null;
  return typeof b === "object" && b !== null && b.ok === false && typeof b.code === "string"
    ? (body as ErrorEnvelope)
    : null;
}

/**
 * How a JSON body is written; JSON.stringify by default. The console passes lib/json's stringifyExactJson, so an
 * integer past 2^53 it holds as a BigInt (an approver's edited order number) is sent with every digit.
 */
export type ApiClientOptions = { writeJson?: (body: unknown) => string };

export function createApiClient(transport: ApiTransport, options: ApiClientOptions = {}): ApiClient {
  const writeJson = options.writeJson ?? ((body: unknown) => JSON.stringify(body));
  const request = async (method: Method, path: string, req: AnyRequest = {}) => {
    const headers: Record<string, string> = { accept: "application/json", ...req.headers };
    let body: string | undefined;
    if (req.content) {
      headers["content-type"] = req.content.type;
      body = req.content.text;
    } else if (req.body !== undefined) {
      headers["content-type"] = "application/json";
      body = writeJson(req.body);
    }
    const answer = await transport({
      method,
      path: apiPath(path, req.params, req.query),
      headers,
      body,
      signal: req.signal,
    });
    return answer.status >= 200 && answer.status < 300
      ? { ok: true, status: answer.status, body: answer.body }
      : { ok: false, status: answer.status, body: answer.body, error: envelopeOf(answer.body) };
  };
  const untyped = request as unknown as ApiClient["request"];
  const call = (method: Method) => ((path: string, req?: AnyRequest) => request(method, path, req)) as never;
  return {
    request: untyped,
    get: call("GET"),
    post: call("POST"),
    put: call("PUT"),
    patch: call("PATCH"),
    delete: call("DELETE"),
  };
}

type BodyCall<M extends Method> = <P extends ApiPathFor<M>>(
  path: P,
  ...args: Args<P, M & ApiMethod<P>>
) => Promise<ApiBody<P, M & ApiMethod<P>>>;

/** The same calls answering a 2xx's body, for callers that handle every failure alike (the console's queries). */
export type ApiBodyClient = {
  get: BodyCall<"GET">;
  post: BodyCall<"POST">;
  put: BodyCall<"PUT">;
  patch: BodyCall<"PATCH">;
  delete: BodyCall<"DELETE">;
};

/** `client`'s calls answering the body of a 2xx, and throwing `failure(answer)` for any other answer. */
export function bodiesOf(client: ApiClient, failure: (answer: ApiFailure) => Error): ApiBodyClient {
  const call = (method: Method) =>
    (async (path: ApiPath, req?: AnyRequest) => {
      const answer = (await client.request(method as never, path, req as never)) as
        { ok: true; body: unknown } | ApiFailure;
      if (!answer.ok) throw failure(answer);
      return answer.body;
    }) as never;
  return { get: call("GET"), post: call("POST"), put: call("PUT"), patch: call("PATCH"), delete: call("DELETE") };
}
