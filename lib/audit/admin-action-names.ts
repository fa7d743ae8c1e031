// The admin actions the audit trail records (lib/audit/admin.ts). No
// imports: the audit page's filters list them in the browser.

export const adminActions = [
  "user_invited",
  "user_role_changed",
  "user_deactivated",
  "user_reactivated",
  "runtime_key_created",
  "runtime_key_revoked",
  "personal_token_created",
  "personal_token_revoked",
  "webhook_endpoint_created",
  "webhook_endpoint_updated",
  "webhook_endpoint_deleted",
  "webhook_secret_rotated",
  "webhook_delivery_resent",
  "policy_changed",
  "tool_catalog_entry_added",
  "tool_catalog_entry_changed",
  "tool_catalog_entry_removed",
  "notification_channel_created",
  "notification_channel_updated",
  "notification_channel_deleted",
  "notification_message_resent",
  "password_changed",
  "password_reset",
  "retention_changed",
  "partition_archived",
  "slack_settings_changed",
  "slack_link_added",
  "slack_link_removed",
] as const;
export type AdminActionName = (typeof adminActions)[number];
