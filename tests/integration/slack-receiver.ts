import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

// Slack's side for tests, on 127.0.0.1: the Web API methods Settle calls (chat.postMessage, chat.update,
// views.open) under /api, and response_url under /response/…, each recorded with its JSON body.

export type SlackCall = { path: string; authorization: string | null; body: Record<string, unknown> };

export type SlackReceiver = {
  url: (path: string) => string;
  calls: SlackCall[];
  to: (path: string) => SlackCall[];
  close: () => Promise<void>;
};

export async function startSlackReceiver(): Promise<SlackReceiver> {
  const calls: SlackCall[] = [];
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
      const answer =
        path === "/api/chat.postMessage"
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
