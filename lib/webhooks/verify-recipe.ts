// How a receiver checks Settle-Signature, in plain Node. The console shows
// this text, the README quotes it, and a test runs it against real signatures,
// so the recipe people copy is known to work. No zod: the browser loads it.

export const verifyRecipe = `import { createHmac, timingSafeEqual } from "node:crypto";

// rawBody: the request body exactly as received, before JSON.parse.
export function verifySettleSignature(rawBody, header, secret, toleranceS = 300) {
  const parts = Object.fromEntries(String(header ?? "").split(",").map((p) => p.trim().split("=", 2)));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceS) return false; // replayed or malformed
  const expected = createHmac("sha256", secret).update(\`\${t}.\${rawBody}\`).digest();
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}`;

export const receiverRecipe = `import { createServer } from "node:http";

createServer((req, res) => {
  let rawBody = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => (rawBody += chunk));
  req.on("end", () => {
    if (!verifySettleSignature(rawBody, req.headers["settle-signature"], process.env.SETTLE_WEBHOOK_SECRET)) {
      return res.writeHead(400).end();
    }
    const event = JSON.parse(rawBody); // { id, type, created_at, data: { invocation_id, decision, ... } }
    // A delivery can arrive more than once: skip event.id (= Settle-Event-Id) if you have handled it.
    res.writeHead(204).end(); // any 2xx within 10 s counts as delivered
  });
}).listen(8080);`;
