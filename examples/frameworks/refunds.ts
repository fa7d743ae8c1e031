import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RefundTools } from "./agents";

// The example's payments provider over HTTP, and the refund tools that call it. `killOn` names a payment whose
// refund is applied and then answered never: the provider tells the demo, which kills the agent's process there.

export type Provider = { url: string; refunds: (payment: string) => number; close: () => Promise<void> };

export async function startProvider(
  onApplied: (payment: string) => void = () => {},
  killOn = new Set<string>(),
): Promise<Provider> {
  const refunds = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://provider");
      if (req.method === "GET") {
        const payment = url.searchParams.get("payment") ?? "";
        res.end(JSON.stringify({ refunds: refunds.get(payment) ?? 0 }));
        return;
      }
      const { payment, amount } = JSON.parse(body || "{}") as { payment: string; amount: number };
      refunds.set(payment, (refunds.get(payment) ?? 0) + 1);
      onApplied(payment);
      if (killOn.has(payment)) return; // applied; the answer never leaves
      res.end(JSON.stringify({ id: `re_${payment}`, status: "succeeded", amount }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    refunds: (payment) => refunds.get(payment) ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function httpRefunds(providerUrl: string): RefundTools {
  return {
    create_refund: async (args, signal) => {
      const res = await fetch(`${providerUrl}/refunds`, { method: "POST", body: JSON.stringify(args), signal });
      return res.json();
    },
    refund_batch: async () => ({ outcome: "permanent", effect_applied: "no", message: "not in this example" }),
  };
}

/** The runtime's own lookup: has this payment been refunded? (what the restarted agent's probe asks) */
export async function refundedAt(providerUrl: string, payment: string): Promise<boolean> {
  const res = await fetch(`${providerUrl}/refunds?payment=${encodeURIComponent(payment)}`);
  return ((await res.json()) as { refunds: number }).refunds > 0;
}
