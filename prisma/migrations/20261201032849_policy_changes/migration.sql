-- CreateTable
CREATE TABLE "policy_changes" (
    "id" UUID NOT NULL,
    "effect_class" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "before" JSONB,
    "after" JSONB,

    CONSTRAINT "policy_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "policy_changes_at_idx" ON "policy_changes"("at");
