-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "headers" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'webhook';
