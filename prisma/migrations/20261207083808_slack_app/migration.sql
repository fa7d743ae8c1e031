-- AlterTable
ALTER TABLE "notification_channels" ADD COLUMN     "slack_channel" TEXT;

-- CreateTable
CREATE TABLE "slack_settings" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "signing_secret" TEXT NOT NULL,
    "bot_token" TEXT NOT NULL,
    "api_base_url" TEXT NOT NULL,
    "actions" JSONB NOT NULL,
    "updated_by" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "slack_settings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "slack_links" (
    "slack_user_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "slack_links_pkey" PRIMARY KEY ("slack_user_id")
);

-- CreateTable
CREATE TABLE "slack_link_codes" (
    "code_hash" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "slack_user_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "slack_link_codes_pkey" PRIMARY KEY ("code_hash")
);

-- CreateTable
CREATE TABLE "slack_requests_seen" (
    "signature" TEXT NOT NULL,
    "seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "slack_requests_seen_pkey" PRIMARY KEY ("signature")
);

-- CreateTable
CREATE TABLE "slack_messages" (
    "channel_id" UUID NOT NULL,
    "invocation_uid" UUID NOT NULL,
    "event" TEXT NOT NULL,
    "slack_channel" TEXT NOT NULL,
    "ts" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "slack_messages_pkey" PRIMARY KEY ("channel_id","invocation_uid","event")
);

-- CreateIndex
CREATE INDEX "slack_links_user_id_idx" ON "slack_links"("user_id");

-- CreateIndex
CREATE INDEX "slack_link_codes_user_id_idx" ON "slack_link_codes"("user_id");

-- CreateIndex
CREATE INDEX "slack_requests_seen_seen_at_idx" ON "slack_requests_seen"("seen_at");

-- CreateIndex
CREATE INDEX "slack_messages_invocation_uid_idx" ON "slack_messages"("invocation_uid");

-- AddForeignKey
ALTER TABLE "slack_links" ADD CONSTRAINT "slack_links_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "slack_link_codes" ADD CONSTRAINT "slack_link_codes_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "slack_messages" ADD CONSTRAINT "slack_messages_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "notification_channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
