/*
  Warnings:

  - A unique constraint covering the columns `[endpoint_id,event_id]` on the table `webhook_deliveries` will be added. If there are existing duplicate values, this will fail.

*/
-- DropIndex
DROP INDEX "webhook_deliveries_event_id_key";

-- AlterTable
ALTER TABLE "invocation_transitions" ADD COLUMN     "not_before" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "resent_at" TIMESTAMPTZ(3),
ADD COLUMN     "resent_by" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_endpoint_id_event_id_key" ON "webhook_deliveries"("endpoint_id", "event_id");

-- The transition also keeps the retry delay, so the webhook fan-out computes
-- the decision of a retry_scheduled state as it was (`wait` until not_before).
CREATE OR REPLACE FUNCTION settle_record_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.version <> 0 AND OLD.status IS NOT DISTINCT FROM NEW.status
     AND OLD.commit_state IS NOT DISTINCT FROM NEW.commit_state THEN
    RETURN NEW;
  END IF;
  INSERT INTO invocation_transitions
    (invocation_uid, runtime_id, tool, effect_class, from_status, to_status, commit_state, resolution_by, not_before, version, at)
  VALUES
    (NEW.id, NEW.runtime_id, NEW.tool, NEW.effect_class, CASE WHEN OLD.version = 0 THEN NULL ELSE OLD.status END,
     NEW.status, NEW.commit_state, NEW.resolution ->> 'by', NEW.not_before, NEW.version, NEW.status_since);
  RETURN NEW;
END
$$;
