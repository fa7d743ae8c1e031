// The part of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module "autocannon" {
  type Histogram = {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  };

  export type Request = {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null;
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, unknown>,
      headers: Record<string, string>,
    ) => void;
  };

  export type Client = { setRequests: (requests: Request[]) => void };

  export type Options = {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    timeout?: number;
    overallRate?: number;
    ignoreCoordinatedOmission?: boolean;
    method?: string;
    headers?: Record<string, string>;
    requests?: Request[];
    setupClient?: (client: Client) => void;
  };

  export type Result = {
    requests: Histogram & { total: number; sent: number };
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  };

  /** Thenable, and an event emitter: `response` gives (client, statusCode, resBytes, responseTime in ms). */
  export type Instance = PromiseLike<Result> & {
    on(
      event: "response",
      listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void,
    ): Instance;
    stop(): void;
  };

  function autocannon(options: Options): Instance;
  export default autocannon;
}
