-- A tamper-evident trail (docs/audit.md, docs/decisions/041-audit-chain.md): every record of what happened to a
-- call (attempts, status transitions, operator and Settle actions, guard answers) joins its runtime's hash chain,
-- and every admin audit entry the admin chain. Each entry keeps its place in the chain (`chain_seq`), the SHA-256
-- of its canonical content (`chain_content`, lib/chain/entries.ts says which columns) and the link hash of its
-- predecessor (`chain_prev`); an entry's own link hash is SHA-256(chain_prev || chain_content). Written by the
-- statement that writes the entry. Rows written before this migration stay outside the chain (NULL).
ALTER TABLE "attempts" ADD COLUMN "chain_seq" BIGINT, ADD COLUMN "chain_content" BYTEA, ADD COLUMN "chain_prev" BYTEA;
ALTER TABLE "invocation_transitions" ADD COLUMN "chain_seq" BIGINT, ADD COLUMN "chain_content" BYTEA, ADD COLUMN "chain_prev" BYTEA;
ALTER TABLE "guard_checks" ADD COLUMN "chain_seq" BIGINT, ADD COLUMN "chain_content" BYTEA, ADD COLUMN "chain_prev" BYTEA;
ALTER TABLE "invocation_actions" ADD COLUMN "chain_seq" BIGINT, ADD COLUMN "chain_content" BYTEA, ADD COLUMN "chain_prev" BYTEA;
ALTER TABLE "admin_actions" ADD COLUMN "chain_seq" BIGINT, ADD COLUMN "chain_content" BYTEA, ADD COLUMN "chain_prev" BYTEA;

-- The walk reads a chain in order, from a place: one index per chained table, led by the runtime.
CREATE INDEX "attempts_runtime_id_chain_seq_idx" ON "attempts"("runtime_id", "chain_seq");
CREATE INDEX "invocation_transitions_runtime_id_chain_seq_idx" ON "invocation_transitions"("runtime_id", "chain_seq");
CREATE INDEX "guard_checks_runtime_id_chain_seq_idx" ON "guard_checks"("runtime_id", "chain_seq");
CREATE INDEX "invocation_actions_runtime_id_chain_seq_idx" ON "invocation_actions"("runtime_id", "chain_seq");
CREATE INDEX "admin_actions_chain_seq_idx" ON "admin_actions"("chain_seq");

-- Each chain's head: how many entries it has and the link hash of the last. A writer locks its chain's head
-- row for the rest of its transaction, so the entries of one chain are numbered and linked in commit order.
-- `chain` is a runtime's id, or `admin`. The last walk's answer is kept beside it for the console's banner.
CREATE TABLE "audit_chain_heads" (
    "chain" TEXT NOT NULL,
    "seq" BIGINT NOT NULL,
    "hash" BYTEA NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "checked_at" TIMESTAMPTZ(3),
    "broken" TEXT,

    CONSTRAINT "audit_chain_heads_pkey" PRIMARY KEY ("chain")
);
-- The admin chain exists from here on: rows of any chained table dated after this are expected in a chain.
INSERT INTO "audit_chain_heads" ("chain", "seq", "hash") VALUES ('admin', 0, decode(repeat('00', 32), 'hex'));

-- What a retired month or batch took out of each chain (lib/chain/checkpoints.ts): which places, with the link
-- hashes at the edges of each run of places, so the walk can cross the gap; named by the archive's manifest.
CREATE TABLE "audit_checkpoints" (
    "archive" TEXT NOT NULL,
    "chain" TEXT NOT NULL,
    "entries" BIGINT NOT NULL,
    "runs" JSONB NOT NULL,
    "last_hash" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "audit_checkpoints_pkey" PRIMARY KEY ("archive", "chain")
);

-- Appends entries to a chain: locks its head (making it if new), and gives each content hash, in the order
-- given, its place and its predecessor's link hash. `after` only orders evaluation inside one statement (the
-- write path passes the count of a step that must come first).
CREATE FUNCTION settle_chain_append(p_chain text, p_contents bytea[], p_after bigint DEFAULT 0)
  RETURNS TABLE (ord int, seq bigint, prev bytea) LANGUAGE plpgsql AS $$
DECLARE
  h_seq bigint;
  h_hash bytea;
  n int := coalesce(cardinality(p_contents), 0);
BEGIN
  IF n = 0 THEN RETURN; END IF;
  SELECT c.seq, c.hash INTO h_seq, h_hash FROM audit_chain_heads c WHERE c.chain = p_chain FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO audit_chain_heads (chain, seq, hash) VALUES (p_chain, 0, decode(repeat('00', 32), 'hex'))
      ON CONFLICT (chain) DO NOTHING;
    SELECT c.seq, c.hash INTO h_seq, h_hash FROM audit_chain_heads c WHERE c.chain = p_chain FOR UPDATE;
  END IF;
  FOR i IN 1..n LOOP
    ord := i;
    seq := h_seq + i;
    prev := h_hash;
    RETURN NEXT;
    h_hash := sha256(h_hash || p_contents[i]);
  END LOOP;
  UPDATE audit_chain_heads AS c SET seq = h_seq + n, hash = h_hash WHERE c.chain = p_chain;
END
$$;
