-- CreateTable
CREATE TABLE "tool_catalog_entries" (
    "id" UUID NOT NULL,
    "runtime_id" UUID NOT NULL,
    "pattern" TEXT NOT NULL,
    "effect_class" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tool_catalog_entries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "tool_catalog_entries_runtime_id_pattern_key" ON "tool_catalog_entries"("runtime_id", "pattern");

-- AddForeignKey
ALTER TABLE "tool_catalog_entries" ADD CONSTRAINT "tool_catalog_entries_runtime_id_fkey" FOREIGN KEY ("runtime_id") REFERENCES "runtimes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
