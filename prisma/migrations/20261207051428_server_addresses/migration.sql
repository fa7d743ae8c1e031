-- CreateTable
CREATE TABLE "server_addresses" (
    "address" TEXT NOT NULL,
    "seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "server_addresses_pkey" PRIMARY KEY ("address")
);
