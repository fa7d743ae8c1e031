// TanStack Query key factory: every query key in the console comes from here,
// so invalidation after a mutation names exactly what it touched.
export const queryKeys = {
  invocations: {
    all: ["invocations"] as const,
    recent: () => [...queryKeys.invocations.all, "recent"] as const,
    queue: (filters: Record<string, string>) => [...queryKeys.invocations.all, "queue", filters] as const,
    detail: (invocationId: string, runtime?: string) =>
      [...queryKeys.invocations.all, "detail", invocationId, runtime ?? null] as const,
    verification: (invocationId: string, runtime: string) =>
      [...queryKeys.invocations.all, "verification", invocationId, runtime] as const,
    earlierAttempts: (invocationId: string, runtime: string, from: string) =>
      [...queryKeys.invocations.all, "earlier-attempts", invocationId, runtime, from] as const,
  },
  tasks: {
    all: ["tasks"] as const,
    detail: (taskId: string, runtime?: string) => [...queryKeys.tasks.all, taskId, runtime ?? null] as const,
  },
  audit: {
    all: ["audit"] as const,
    list: (filters: Record<string, string>) => [...queryKeys.audit.all, filters] as const,
  },
  savedViews: { all: ["saved-views"] as const },
  admin: {
    users: ["admin", "users"] as const,
    runtimeKeys: ["admin", "runtime-keys"] as const,
    toolCatalog: ["admin", "tool-catalog"] as const,
    /** The endpoint list; a prefix of every key below, so invalidating it refreshes all of webhooks. */
    webhooks: ["admin", "webhooks"] as const,
    webhookEndpoint: (endpointId: string) => [...queryKeys.admin.webhooks, endpointId] as const,
    webhookDeliveries: (endpointId: string, status: string) =>
      [...queryKeys.admin.webhookEndpoint(endpointId), "deliveries", status] as const,
    webhookDelivery: (endpointId: string, deliveryId: string) =>
      [...queryKeys.admin.webhookEndpoint(endpointId), "delivery", deliveryId] as const,
    /** The channel list; a prefix of every key below. */
    notifications: ["admin", "notifications"] as const,
    notificationChannel: (channelId: string) => [...queryKeys.admin.notifications, channelId] as const,
    notificationMessages: (channelId: string, status: string) =>
      [...queryKeys.admin.notificationChannel(channelId), "messages", status] as const,
    notificationMessage: (channelId: string, messageId: string) =>
      [...queryKeys.admin.notificationChannel(channelId), "message", messageId] as const,
    slackSettings: ["admin", "slack", "settings"] as const,
    slackLinks: ["admin", "slack", "links"] as const,
  },
  me: { tokens: ["me", "tokens"] as const, slackLinks: ["me", "slack-links"] as const },
  policies: ["policies"] as const,
  retention: ["retention"] as const,
};
