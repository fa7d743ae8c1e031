import { listEvidenceKeys } from "@/lib/evidence/keys";
import { evidenceKeysSchema } from "@/lib/evidence/schemas";
import { otherMethods, withRoute } from "@/lib/http/route";

// The public keys that sign evidence packs, for anyone who checks one; also at /.well-known/settle-evidence-key.
export const GET = withRoute({
  auth: false,
  summary: "The public keys that sign evidence packs",
  description:
    "The active key first, then retired ones (rotated keys stay, so older packs still verify). Also served at /.well-known/settle-evidence-key.",
  tags: ["Evidence"],
  response: evidenceKeysSchema,
  handler: async ({ db }) => ({ keys: await listEvidenceKeys(db) }),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
