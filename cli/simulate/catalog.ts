// The simulated runtime's tools (source article 002 (docs/outcome-model.md)'s effect classes) and the business
// workflows its tasks follow.

import type { EffectClass } from "@/lib/outcome/vocabulary";

export type { EffectClass };
export type Tool = { name: string; effect: EffectClass; target: string; batch?: boolean };

const list: Tool[] = [
  { name: "get_price", effect: "read", target: "sku" },
  { name: "get_order_status", effect: "read", target: "order" },
  { name: "create_order", effect: "create", target: "order" },
  { name: "create_invoice", effect: "create", target: "invoice" },
  { name: "create_ticket", effect: "create", target: "ticket" },
  { name: "create_booking", effect: "create", target: "slot" },
  { name: "update_crm_contact", effect: "create", target: "contact" },
  { name: "update_sheet_range", effect: "create", target: "range", batch: true },
  { name: "send_email", effect: "send", target: "thread" },
  { name: "send_sms", effect: "send", target: "phone" },
  { name: "post_webhook", effect: "send", target: "endpoint" },
  { name: "send_slack_message", effect: "send", target: "channel" },
  { name: "charge_card", effect: "money", target: "payment" },
  { name: "create_refund", effect: "money", target: "refund" },
  { name: "transfer_funds", effect: "money", target: "transfer" },
  { name: "delete_record", effect: "destructive", target: "record" },
  { name: "cancel_booking", effect: "destructive", target: "booking" },
  { name: "revoke_access", effect: "destructive", target: "grant" },
];

export const tools: Record<string, Tool> = Object.fromEntries(list.map((t) => [t.name, t]));

export function tool(name: string): Tool {
  const found = tools[name];
  if (!found) throw new Error(`no simulated tool ${name}`);
  return found;
}

/** A task's tools in order; a task stops at the first step that does not succeed. */
export type Workflow = { prefix: string; actor: string; steps: string[] };

export const workflows: Workflow[] = [
  { prefix: "ord", actor: "agent:checkout", steps: ["get_price", "create_order", "charge_card", "send_email"] },
  { prefix: "rfd", actor: "agent:support", steps: ["get_order_status", "create_refund", "send_email"] },
  { prefix: "inv", actor: "agent:billing", steps: ["create_invoice", "send_email"] },
  { prefix: "tkt", actor: "agent:support", steps: ["create_ticket", "update_crm_contact", "send_slack_message"] },
  { prefix: "bk", actor: "agent:concierge", steps: ["get_price", "cancel_booking", "create_booking", "send_sms"] },
  {
    prefix: "gdpr",
    actor: "agent:privacy",
    steps: ["get_order_status", "delete_record", "revoke_access", "send_email"],
  },
  { prefix: "rpt", actor: "agent:ops", steps: ["update_sheet_range", "post_webhook"] },
  { prefix: "pay", actor: "agent:treasury", steps: ["get_order_status", "transfer_funds", "send_email"] },
];
