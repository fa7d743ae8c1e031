import { queryKeys } from "@/lib/query/keys";
import { api } from "../api";

// Whose outbox deliveries a log shows: a runtime's webhook endpoint, or a notification channel's messages
// (digests). The log, its details and Resend are the same; only the routes and query keys differ.

export type DeliverySource = { kind: "endpoint"; id: string; runtime: string } | { kind: "channel"; id: string };

type ListQuery = { limit: number; status?: "pending" | "delivered" | "failed"; cursor?: string };

export const deliverySource = (source: DeliverySource) =>
  source.kind === "endpoint"
    ? {
        listKey: (status: string) => queryKeys.admin.webhookDeliveries(source.id, status),
        itemKey: (id: string) => queryKeys.admin.webhookDelivery(source.id, id),
        root: queryKeys.admin.webhooks,
        list: (query: ListQuery) =>
          api.get("/api/v1/admin/webhooks/{endpoint_id}/deliveries", { params: { endpoint_id: source.id }, query }),
        get: (id: string) =>
          api.get("/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}", {
            params: { endpoint_id: source.id, delivery_id: id },
          }),
        resend: (id: string) =>
          api.post("/api/v1/admin/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend", {
            params: { endpoint_id: source.id, delivery_id: id },
          }),
      }
    : {
        listKey: (status: string) => queryKeys.admin.notificationMessages(source.id, status),
        itemKey: (id: string) => queryKeys.admin.notificationMessage(source.id, id),
        root: queryKeys.admin.notifications,
        list: (query: ListQuery) =>
          api.get("/api/v1/admin/notifications/{channel_id}/messages", { params: { channel_id: source.id }, query }),
        get: (id: string) =>
          api.get("/api/v1/admin/notifications/{channel_id}/messages/{message_id}", {
            params: { channel_id: source.id, message_id: id },
          }),
        resend: (id: string) =>
          api.post("/api/v1/admin/notifications/{channel_id}/messages/{message_id}/resend", {
            params: { channel_id: source.id, message_id: id },
          }),
      };
