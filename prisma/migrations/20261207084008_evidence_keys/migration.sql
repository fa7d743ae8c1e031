-- CreateTable
CREATE TABLE "evidence_keys" (
    "id" TEXT NOT NULL,
    "public_key" TEXT NOT NULL,
    "private_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "retired_at" TIMESTAMPTZ(3),

    CONSTRAINT "evidence_keys_pkey" PRIMARY KEY ("id")
);
