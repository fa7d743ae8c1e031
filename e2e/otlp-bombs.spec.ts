import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { expect, test } from "@playwright/test";
import { readState, startAnother } from "./server";

// OTLP bodies of a few KB that inflate to millions of elements, sent to
// `npm start` as shipped (the fast lane) and through Next.js: each is refused
// (413, or 400 when nested too deep) without being decoded; each grows the
// server's memory (RSS, read from /proc, at its peak) by less than 50 MB, three
// at once by at most that each, and /api/health keeps answering meanwhile.
// Times to refuse and the memory figures are printed.

const state = readState().console;
const MAX_GROWTH = 50 * 1024 * 1024;

const varint = (n: number) => {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
};
const field = (id: number, body: Buffer) => Buffer.concat([varint(id * 8 + 2), varint(body.length), body]);
const INFLATED = 8 * 1024 * 1024 - 64;

/** Each bomb: its gzip body and Content-Type. */
const bombs: Array<{ name: string; type: string; body: Buffer }> = [
  // The issue's: 8 MiB of empty KeyValues (`0a 00`), 8 KB as sent.
  {
    name: "empty elements",
    type: "application/x-protobuf",
    body: gzipSync(Buffer.alloc(INFLATED, Buffer.from([0x0a, 0x00]))),
  },
  // One span whose attribute is an arrayValue of 4 M empty values.
  {
    name: "a 4 M-item array",
    type: "application/x-protobuf",
    body: gzipSync(
      field(
        1,
        field(
          2,
          field(
            2,
            Buffer.concat([
              field(1, Buffer.alloc(16, 7)),
              field(2, Buffer.alloc(8, 7)),
              field(
                9,
                Buffer.concat([
                  field(1, Buffer.from("k")),
                  field(2, field(5, Buffer.alloc(INFLATED - 64, Buffer.from([0x0a, 0x00])))),
                ]),
              ),
            ]),
          ),
        ),
      ),
    ),
  },
  {
    name: "OTLP/JSON of tiny objects",
    type: "application/json",
    body: gzipSync(Buffer.from(`{"resourceSpans":[${"{},".repeat(Math.floor(INFLATED / 3) - 10)}{}]}`)),
  },
  {
    name: "OTLP/JSON nested deep",
    type: "application/json",
    body: gzipSync(Buffer.from(`{"resourceSpans":[${'{"a":['.repeat(Math.floor(INFLATED / 7) - 10)}`)),
  },
];

/** The server's resident memory, in bytes (VmRSS). */
function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function bombOnce(baseURL: string, path: string, bomb: (typeof bombs)[number]) {
  const started = performance.now();
  const res = await fetch(`${baseURL}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${state.key}`, "content-type": bomb.type, "content-encoding": "gzip" },
    body: new Uint8Array(bomb.body),
  });
  // A refusal is Settle's JSON envelope; an export read (200) answers in protobuf, which has no code.
  const text = await res.text();
  const code = res.headers.get("content-type")?.startsWith("application/json")
    ? (JSON.parse(text) as { code?: string }).code
    : undefined;
  return { status: res.status, code, ms: Math.round(performance.now() - started) };
}

async function health(baseURL: string) {
  const started = performance.now();
  const res = await fetch(`${baseURL}/api/health`);
  await res.text();
  return { status: res.status, ms: Math.round(performance.now() - started) };
}

/** Small real exports first, each encoding gzip or not: whatever loads on the first OTLP request is loaded before memory is measured. */
async function warm(baseURL: string) {
  const empty = JSON.stringify({ resourceSpans: [] });
  for (const [type, body] of [
    ["application/json", Buffer.from(empty)],
    ["application/x-protobuf", Buffer.alloc(0)],
  ] as const) {
    for (const gzip of [false, true]) {
      const headers = {
        authorization: `Bearer ${state.key}`,
        "content-type": type,
        ...(gzip ? { "content-encoding": "gzip" } : {}),
      };
      const res = await fetch(`${baseURL}/v1/traces`, {
        method: "POST",
        headers,
        body: new Uint8Array(gzip ? gzipSync(body) : body),
      });
      expect(res.status).toBe(200);
    }
  }
}

/** Runs `fn` while sampling the server's RSS every 20 ms: the growth at its peak and at the end. */
async function measured(
  pid: number,
  fn: () => Promise<void>,
): Promise<{ before: number; after: number; peak: number }> {
  const before = rss(pid);
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
  try {
    await fn();
  } finally {
    clearInterval(sample);
  }
  const after = rss(pid);
  return { before, after, peak: Math.max(peak, after) };
}
const grew = (m: { before: number; after: number; peak: number }) =>
  `RSS ${mb(m.before)} → ${mb(m.after)}, peak ${mb(m.peak)}: grew ${mb(m.after - m.before)}, at most ${mb(m.peak - m.before)}`;

async function attack(label: string, baseURL: string, pid: number) {
  await warm(baseURL);
  // One bomb at a time, every kind to both paths: each costs the server its body's bytes, not what they would decode to.
  const start = rss(pid);
  for (const path of ["/v1/traces", "/api/v1/otlp/v1/traces"]) {
    for (const bomb of bombs) {
      let r = { status: 0, code: undefined as string | undefined, ms: 0 };
      const m = await measured(pid, async () => {
        r = await bombOnce(baseURL, path, bomb);
      });
      console.log(
        `${label} ${path} ${bomb.name} (${bomb.body.length} bytes sent): ${r.status} ${r.code} in ${r.ms} ms; ${grew(m)}`,
      );
      expect(r.status, `${bomb.name} to ${path}`).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(m.peak - m.before, `${bomb.name} to ${path}: memory`).toBeLessThan(MAX_GROWTH);
    }
  }
  console.log(`${label} ${bombs.length * 2} bombs one by one: RSS ${mb(start)} → ${mb(rss(pid))}`);

  // Three at once, and /api/health asked meanwhile: it answers; each body in flight costs its inflated bytes only.
  const healths: Array<{ status: number; ms: number }> = [];
  const atOnce = await measured(pid, async () => {
    const inFlight = Promise.all(bombs.slice(0, 3).map((b) => bombOnce(baseURL, "/v1/traces", b)));
    let done = false;
    void inFlight.finally(() => (done = true));
    do healths.push(await health(baseURL));
    while (!done);
    for (const r of await inFlight) expect(r.status).toBe(413);
  });
  console.log(
    `${label} three bombs at once: ${grew(atOnce)}; /api/health meanwhile: ${healths.map((h) => `${h.status} in ${h.ms} ms`).join(", ")}`,
  );
  expect(healths.every((h) => h.status === 200)).toBe(true);
  expect(atOnce.peak - atOnce.before).toBeLessThan(3 * MAX_GROWTH);
}

test("OTLP bombs are refused unread through the fast lane, memory grows < 50 MB, /api/health answers", async () => {
  test.setTimeout(120_000);
  await attack("lane:", state.baseURL, state.pid);
});

test("and through Next.js (SETTLE_FAST_LANE=off)", async () => {
  test.setTimeout(120_000);
  const next = await startAnother(state.databaseUrl, { SETTLE_FAST_LANE: "off" });
  try {
    await attack("next:", next.baseURL, next.pid);
  } finally {
    next.stop();
  }
});
