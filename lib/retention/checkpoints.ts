import type { Db } from "../db/client";
import {
  chainKindOf,
  checkpointSha256,
  checkpointValue,
  collectCheckpoints,
  type Checkpoint,
} from "../chain/checkpoints";
import { signEvidence } from "../evidence/keys";
import type { ManifestCheckpoint } from "./archive";

// Retention's checkpoints (lib/chain/checkpoints.ts): before rows of a chained table leave, one checkpoint per
// chain they were in, hashed and signed with Settle's evidence key (lib/evidence/keys.ts). The archive's manifest
// entry names each (chain, entries, last hash, SHA-256); the database keeps them whole for the walk.

/**
 * The signed checkpoints of the rows of `table` that `relation` (SQL with alias `t`) holds and `where` picks,
 * for the archive file `archive`; none for a table no chain covers.
 */
export async function takeCheckpoints(
  db: Db,
  table: string,
  archive: string,
  relation: string,
  where?: string,
  params?: unknown[],
): Promise<Checkpoint[]> {
  const kind = chainKindOf(table);
  if (!kind) return [];
  const signed: Checkpoint[] = [];
  for (const body of await collectCheckpoints(db.driver, kind, archive, relation, where, params)) {
    signed.push({ ...body, sha256: checkpointSha256(body), signature: await signEvidence(db, checkpointValue(body)) });
  }
  return signed;
}

/** What the manifest says of each checkpoint of a file. */
export const manifestCheckpoints = (checkpoints: Checkpoint[]): ManifestCheckpoint[] =>
  checkpoints.map((c) => ({
    chain: c.chain,
    entries: c.entries,
    last_hash: c.lastHash,
    sha256: c.sha256,
    key_id: c.signature?.key_id ?? null,
  }));
