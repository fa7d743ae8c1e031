-- CreateTable
CREATE TABLE "verifier_polls" (
    "runtime_id" UUID NOT NULL,
    "polled_at" TIMESTAMPTZ(3) NOT NULL,
    "worker" TEXT,

    CONSTRAINT "verifier_polls_pkey" PRIMARY KEY ("runtime_id")
);

-- AddForeignKey
ALTER TABLE "verifier_polls" ADD CONSTRAINT "verifier_polls_runtime_id_fkey" FOREIGN KEY ("runtime_id") REFERENCES "runtimes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
