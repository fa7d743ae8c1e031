-- Tokens made before expiry existed get 90 days from today, the new default, rather than never.
-- AlterTable
ALTER TABLE "personal_tokens" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
UPDATE "personal_tokens" SET "expires_at" = now() + interval '90 days';
ALTER TABLE "personal_tokens" ALTER COLUMN "expires_at" SET NOT NULL;

-- CreateTable
CREATE TABLE "sign_in_failures" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),

    CONSTRAINT "sign_in_failures_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "admin_actions" (
    "id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,

    CONSTRAINT "admin_actions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "admin_actions_at_id_idx" ON "admin_actions"("at" DESC, "id" DESC);
