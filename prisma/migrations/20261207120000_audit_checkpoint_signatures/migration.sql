-- Retention's checkpoints are signed (lib/chain/checkpoints.ts): the first place whose content or link did not
-- hold when its rows were archived (null when all did), and the Ed25519 signature of the evidence key over the
-- checkpoint's canonical text.
ALTER TABLE "audit_checkpoints" ADD COLUMN     "first_unsound" BIGINT,
ADD COLUMN     "signature" JSONB;
