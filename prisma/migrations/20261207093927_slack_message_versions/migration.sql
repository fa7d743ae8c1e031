-- AlterTable
ALTER TABLE "slack_messages" ADD COLUMN     "drawn_version" INTEGER NOT NULL DEFAULT 0;
