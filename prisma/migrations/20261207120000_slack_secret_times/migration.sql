-- AlterTable
ALTER TABLE "slack_settings" ADD COLUMN     "bot_token_changed_at" TIMESTAMPTZ(3),
ADD COLUMN     "signing_secret_changed_at" TIMESTAMPTZ(3);
