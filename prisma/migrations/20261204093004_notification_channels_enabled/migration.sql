-- The write path asks on every transition whether a notification channel is enabled, on connections with
-- enable_seqscan off (lib/db/driver.ts): without an index the planner's penalty made each write a JIT-compiled plan.
-- CreateIndex
CREATE INDEX "notification_channels_enabled_idx" ON "notification_channels"("enabled");
