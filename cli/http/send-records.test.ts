import { describe, expect, it } from "vitest";
import { recordError } from "@/lib/errors";
import { createApiClient } from "@/server/api-client";
import { CliError, EXIT_UNREACHABLE } from "../errors";
import { MAX_BODY_BYTES, sendLines, toLine } from "./send-records";
import type { Answer, SettleClient } from "./settle-client";

/** A Settle that accepts every line that parses and has a task_id, and remembers each body. */
function fakeSettle(options: { failOn?: number } = {}) {
  const bodies: string[] = [];
  // The real typed client over a fake transport: what it sends is what the CLI would.
  const client: SettleClient = {
    url: new URL("http://settle.test/"),
    api: createApiClient(async ({ method, path, headers, body = "" }): Promise<Answer> => {
      if (method !== "POST" || path !== "/api/v1/envelopes") return { status: 404, body: undefined };
      expect(headers["content-type"]).toBe("application/x-ndjson");
      bodies.push(body);
      if (options.failOn === bodies.length) throw new CliError("cannot reach Settle", EXIT_UNREACHABLE);
      const results = body.split("\n").map((line, index) => {
        let record: { task_id?: string } | null = null;
        try {
          record = JSON.parse(line) as { task_id?: string };
        } catch {
          return {
            index,
            status: "rejected",
            event_id: null,
            invocation_id: null,
            error: recordError({ code: "INVALID_JSON", message: "not JSON" }, `record ${index}`),
          };
        }
        return record?.task_id
          ? { index, status: "accepted", event_id: null, invocation_id: `inv-${record.task_id}` }
          : {
              index,
              status: "rejected",
              event_id: null,
              invocation_id: null,
              error: recordError({ code: "MISSING_REQUIRED_FIELD", message: "task_id" }, `record ${index}`),
            };
      });
      const count = (status: string) => results.filter((r) => r.status === status).length;
      return {
        status: 207,
        body: { results, accepted: count("accepted"), duplicates: count("duplicate"), rejected: count("rejected") },
      };
    }),
  };
  return { client, bodies };
}

const lines = (n: number, text = (i: number) => JSON.stringify({ task_id: `t${i}` })) =>
  Array.from({ length: n }, (_, i) => toLine(i + 1, text(i)));

describe("sendLines", () => {
  it("sends at most the batch size per request", async () => {
    const { client, bodies } = fakeSettle();
    const report = await sendLines(client, lines(1203), { batchSize: 500 });
    expect(bodies.map((b) => b.split("\n").length)).toEqual([500, 500, 203]);
    expect(report).toMatchObject({
      stopped: null,
      lastLine: 1203,
      tally: { records: 1203, requests: 3, accepted: 1203, rejected: 0 },
    });
  });

  it("keeps every request body within 1 MiB, counting the newlines", async () => {
    const { client, bodies } = fakeSettle();
    // 4 lines of exactly a quarter MiB: with 3 newlines they would be 3 bytes too many for one request.
    const quarter = (i: number) => `{"task_id":"t${i}","pad":"${"x".repeat(MAX_BODY_BYTES / 4 - 25)}"}`;
    const input = lines(4, quarter);
    expect(input.every((l) => l.bytes === MAX_BODY_BYTES / 4)).toBe(true);
    await sendLines(client, input, { batchSize: 500 });
    expect(bodies.map((b) => Buffer.byteLength(b))).toEqual([(MAX_BODY_BYTES / 4) * 3 + 2, MAX_BODY_BYTES / 4]);
  });

  it("rejects a line over 1 MiB without sending it, and maps Settle's answers back to line numbers", async () => {
    const { client, bodies } = fakeSettle();
    const input = [
      toLine(3, '{"task_id":"a"}'),
      toLine(7, "{oops"),
      toLine(9, "x".repeat(MAX_BODY_BYTES + 1)),
      toLine(12, '{"tool":"t"}'),
    ];
    const seen: Array<[number, string, string | null]> = [];
    const report = await sendLines(client, input, {
      batchSize: 500,
      onResult: (r) => seen.push([r.line.lineNo, r.status, r.code]),
    });
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.split("\n")).toHaveLength(3);
    expect(seen.sort((a, b) => a[0] - b[0])).toEqual([
      [3, "accepted", null],
      [7, "rejected", "INVALID_JSON"],
      [9, "rejected", "LINE_TOO_LARGE"],
      [12, "rejected", "MISSING_REQUIRED_FIELD"],
    ]);
    expect(report.tally).toMatchObject({ accepted: 1, rejected: 3 });
  });

  it("stops at a request-level failure and reports what was answered before it", async () => {
    const { client } = fakeSettle({ failOn: 2 });
    const report = await sendLines(client, lines(25), { batchSize: 10 });
    expect(report.stopped?.exitCode).toBe(EXIT_UNREACHABLE);
    expect(report.lastLine).toBe(10);
    expect(report.tally).toMatchObject({ records: 10, accepted: 10, requests: 1 });
  });
});
