import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

// Slack's side for tests, on 127.0.0.1: the Web API methods Settle calls (chat.postMessage, chat.update,
// views.open) under /api, and response_url under /response/…, each recorded with its JSON body. A views.open
// whose modal breaks Slack's documented limits is answered as Slack does (invalid_arguments) and kept in
// `refused`, with what was wrong.

export type SlackCall = { path: string; authorization: string | null; body: Record<string, unknown> };

export type SlackReceiver = {
  url: (path: string) => string;
  calls: SlackCall[];
  to: (path: string) => SlackCall[];
  refused: string[];
  close: () => Promise<void>;
};

const plainText = (o: unknown) => (o as { text?: string } | undefined)?.text ?? "";

/** What in a modal view Slack's views.open would refuse (Block Kit's limits for the fields Settle uses). */
export function modalProblems(view: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (plainText(view.title).length > 24) problems.push("title over 24 characters");
  if (plainText(view.submit).length > 24) problems.push("submit over 24 characters");
  if (String(view.private_metadata ?? "").length > 3000) problems.push("private_metadata over 3000 characters");
  if (String(view.callback_id ?? "").length > 255) problems.push("callback_id over 255 characters");
  for (const block of (view.blocks ?? []) as Array<Record<string, any>>) {
    const e = block.element as Record<string, any> | undefined;
    if (block.type !== "input" || e?.type !== "plain_text_input") continue;
    if (plainText(block.label).length > 2000) problems.push(`${block.block_id}: label over 2000 characters`);
    if (e.max_length !== undefined && (e.max_length < 1 || e.max_length > 3000))
      problems.push(`${block.block_id}: max_length ${e.max_length} outside 1–3000`);
    if (typeof e.initial_value === "string" && e.initial_value.length > (e.max_length ?? 3000))
      problems.push(`${block.block_id}: initial_value longer than max_length`);
  }
  return problems;
}

export async function startSlackReceiver(): Promise<SlackReceiver> {
  const calls: SlackCall[] = [];
  const refused: string[] = [];
  let ts = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        // recorded as empty
      }
      const path = req.url ?? "/";
      calls.push({ path, authorization: req.headers.authorization ?? null, body });
      if (path.startsWith("/response/")) {
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
        return;
      }
      ts += 1;
      const problems = path === "/api/views.open" ? modalProblems((body.view ?? {}) as Record<string, unknown>) : [];
      refused.push(...problems);
      const answer = problems.length
        ? { ok: false, error: "invalid_arguments", response_metadata: { messages: problems } }
        : path === "/api/chat.postMessage"
          ? { ok: true, channel: body.channel, ts: `1700000000.${String(ts).padStart(6, "0")}` }
          : { ok: true };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    calls,
    to: (path) => calls.filter((c) => c.path === path),
    refused,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
