-- What a call was and where to check it: a catalog entry's summary template and runbook; the summary each
-- record with arguments was given at ingest (so a replayed fold has it) and each invocation's latest one.
ALTER TABLE "tool_catalog_entries" ADD COLUMN "summary" TEXT, ADD COLUMN "runbook_url" TEXT, ADD COLUMN "runbook" TEXT;
ALTER TABLE "attempts" ADD COLUMN "summary" TEXT;
ALTER TABLE "invocations" ADD COLUMN "summary" TEXT;
