-- CreateTable
CREATE TABLE "invocation_search" (
    "invocation_uid" UUID NOT NULL,
    "ids" TEXT NOT NULL,

    CONSTRAINT "invocation_search_pkey" PRIMARY KEY ("invocation_uid")
);

-- AddForeignKey
ALTER TABLE "invocation_search" ADD CONSTRAINT "invocation_search_invocation_uid_fkey" FOREIGN KEY ("invocation_uid") REFERENCES "invocations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The queue's free-text search (lib/domain/queue.ts, `q`): a part of a task id,
-- invocation id or idempotency key. `LIKE '%q%'` can use no b-tree, so over all
-- invocations (status=all) it read the whole table. The ids live here, joined
-- by spaces, under a trigram index; the query still tests each id of the
-- invocation on its own, so what matches is exactly what matched before.
--
-- Kept by a trigger, whichever code path writes invocations: a row when an
-- invocation is created, rewritten only when one of its ids changes (the
-- idempotency key can arrive with a later record). Invocation rows are
-- rewritten by every record, and rewriting a trigram index with them would tax
-- ingest; this table is written about once per invocation.
CREATE FUNCTION settle_invocation_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invocation_search (invocation_uid, ids)
  VALUES (NEW.id, NEW.task_id || ' ' || NEW.invocation_id || ' ' || coalesce(NEW.idempotency_key, ''))
  ON CONFLICT (invocation_uid) DO UPDATE SET ids = excluded.ids;
  RETURN NULL;
END
$$;

CREATE TRIGGER invocations_search_insert
  AFTER INSERT ON invocations
  FOR EACH ROW EXECUTE FUNCTION settle_invocation_search();

CREATE TRIGGER invocations_search_update
  AFTER UPDATE OF task_id, invocation_id, idempotency_key ON invocations
  FOR EACH ROW
  WHEN (OLD.task_id IS DISTINCT FROM NEW.task_id OR OLD.invocation_id IS DISTINCT FROM NEW.invocation_id
        OR OLD.idempotency_key IS DISTINCT FROM NEW.idempotency_key)
  EXECUTE FUNCTION settle_invocation_search();

INSERT INTO invocation_search (invocation_uid, ids)
SELECT id, task_id || ' ' || invocation_id || ' ' || coalesce(idempotency_key, '') FROM invocations;

-- pg_trgm ships with PostgreSQL and is a trusted extension (any user who may
-- create objects in the database may create it); the embedded PGlite loads it
-- (lib/db/driver.ts). Where it cannot be created the migration still applies,
-- without the index, and search reads the whole table as it did before.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'pg_trgm is not available (%): the queue''s free-text search will read the whole table', SQLERRM;
END
$$;

-- The operator class is named with the extension's schema, which need not be on the search path.
DO $$
DECLARE
  trgm_schema name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm');
BEGIN
  IF trgm_schema IS NOT NULL THEN
    EXECUTE format('CREATE INDEX "invocation_search_ids_trgm_idx" ON "invocation_search" USING gin (ids %I.gin_trgm_ops)', trgm_schema);
  END IF;
END
$$;
