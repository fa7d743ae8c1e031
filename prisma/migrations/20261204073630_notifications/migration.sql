-- Notification channels (lib/notifications): where people are told, what waits for each channel's next
-- digest, and how far the scans for stalls and duplicate flags have read. A digest is a delivery in the
-- existing outbox, so webhook_deliveries now goes to an endpoint or to a channel, never both.
-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "channel_id" UUID,
ALTER COLUMN "endpoint_id" DROP NOT NULL;

-- CreateTable
CREATE TABLE "notification_channels" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "url" TEXT,
    "email_to" TEXT[],
    "secret" TEXT NOT NULL,
    "runtimes" TEXT[],
    "effect_classes" TEXT[],
    "events" TEXT[],
    "digest_s" INTEGER NOT NULL DEFAULT 60,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "last_message_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notification_channels_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "notification_items" (
    "channel_id" UUID NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "source" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "invocation_uid" UUID,
    "facts" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "message_id" UUID,

    CONSTRAINT "notification_items_pkey" PRIMARY KEY ("channel_id","id")
);

-- CreateTable
CREATE TABLE "notification_scans" (
    "name" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "notification_scans_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "notification_items_waiting_idx" ON "notification_items"("channel_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "notification_items_channel_id_source_key" ON "notification_items"("channel_id", "source");

-- CreateIndex
CREATE INDEX "webhook_deliveries_channel_id_created_at_idx" ON "webhook_deliveries"("channel_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_channel_id_event_id_key" ON "webhook_deliveries"("channel_id", "event_id");

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "notification_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "notification_items" ADD CONSTRAINT "notification_items_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "notification_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_one_target" CHECK (num_nonnulls("endpoint_id", "channel_id") = 1);
