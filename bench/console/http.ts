import autocannon from "autocannon";
import { measureCpu, type CpuUse } from "../cpu";
import { percentile, round } from "../load";

// GETs one path for a while over `connections` keep-alive connections (a
// closed loop: each sends its next request when the last one is answered) and
// keeps every response's latency, as bench/load.ts does for ingest.

export type Target = { label: string; path: string; headers: Record<string, string>; kind: "api" | "page" };
export type GetResult = {
  label: string;
  path: string;
  connections: number;
  duration_s: number;
  requests: number;
  req_per_s: number;
  latency_ms: { p50: number; p95: number; p99: number; max: number };
  bytes_per_response: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  cpu_cores_used: CpuUse;
};

export async function measureGet(
  baseUrl: string,
  target: Target,
  opts: { connections: number; duration: number; serverPid: number },
): Promise<GetResult> {
  const latencies: number[] = [];
  let bytes = 0;
  const cpu = measureCpu(opts.serverPid);
  const instance = autocannon({
    url: baseUrl,
    connections: opts.connections,
    duration: opts.duration,
    timeout: 30,
    requests: [{ method: "GET", path: target.path, headers: target.headers }],
  });
  instance.on("response", (_client, status, resBytes, ms) => {
    if (status >= 200 && status < 300) {
      latencies.push(ms);
      bytes += resBytes;
    }
  });
  const result = await instance;
  const cpuUse = cpu();
  latencies.sort((a, b) => a - b);
  return {
    label: target.label,
    path: target.path,
    connections: opts.connections,
    duration_s: result.duration,
    requests: result.requests.total,
    req_per_s: round(result.requests.total / result.duration),
    latency_ms: {
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? 0),
    },
    bytes_per_response: latencies.length > 0 ? Math.round(bytes / latencies.length) : 0,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    cpu_cores_used: cpuUse,
  };
}
