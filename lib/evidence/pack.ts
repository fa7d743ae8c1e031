import "server-only";
import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { publicUrl } from "../env";
import { ApiError } from "../errors";
import { getInvocationRow, type Scope } from "../invocations/read";
import { buildPackBody } from "./build";
import { canonicalJson } from "./canonical";
import { BUNDLE_FORMAT, PACK_FORMAT, type EvidenceBundle, type EvidencePack } from "./format";
import { signEvidence } from "./keys";
import { selectExportedInvocations, selectHistory, type ExportQuery } from "./queries";

// One invocation's evidence pack, signed; and a bundle of packs for an auditor (a task or a time range).

/** The pack of an invocation the caller can see, or null when there is none. */
export async function getEvidencePack(
  db: Db,
  scope: Scope,
  invocationId: string,
  { runtime, now = new Date() }: { runtime?: string; now?: Date } = {},
): Promise<EvidencePack | null> {
  const row = await getInvocationRow(db, scope, invocationId, { runtime });
  if (!row) return null;
  const history = await selectHistory(db, row.runtimeId, row.id);
  const pack = buildPackBody({ row, history, issuedAt: now, issuerUrl: publicUrl() });
  return { format: PACK_FORMAT, pack, signature: await signEvidence(db, pack) };
}

/** The most invocations one bundle holds: a larger export is split by time range. */
export const BUNDLE_MAX_PACKS = 5_000;

/** Every pack an export names, in one signed bundle whose index lists each pack's digest. */
export async function exportEvidence(
  db: Db,
  scope: Scope,
  query: Omit<ExportQuery, "runtimeId">,
  now = new Date(),
): Promise<EvidenceBundle> {
  const listed = await selectExportedInvocations(
    db,
    { ...query, runtimeId: scope.runtimeId ?? null },
    BUNDLE_MAX_PACKS + 1,
  );
  if (listed.length > BUNDLE_MAX_PACKS)
    throw new ApiError(
      "INVALID_REQUEST",
      `More than ${BUNDLE_MAX_PACKS} invocations match: export a shorter time range (--from, --to).`,
    );
  const packs: EvidencePack[] = [];
  for (const item of listed) {
    const pack = await getEvidencePack(db, scope, item.invocation_id, { runtime: item.runtime, now });
    if (pack) packs.push(pack);
  }
  const bundle = {
    issued_at: now.toISOString(),
    issuer: { name: "Settle" as const, url: publicUrl() },
    query: {
      runtime: query.runtime ?? null,
      task_id: query.taskId ?? null,
      from: query.from?.toISOString() ?? null,
      to: query.to?.toISOString() ?? null,
    },
    index: packs.map((p) => ({
      runtime: p.pack.invocation.runtime,
      invocation_id: p.pack.invocation.invocation_id,
      sha256: createHash("sha256").update(canonicalJson(p), "utf8").digest("hex"),
    })),
  };
  return { format: BUNDLE_FORMAT, bundle, packs, signature: await signEvidence(db, bundle) };
}
