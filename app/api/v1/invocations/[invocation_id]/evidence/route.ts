import { z } from "zod";
import { notVisible, orNotFound } from "@/lib/errors";
import { canonicalJson } from "@/lib/evidence/canonical";
import { getEvidencePack } from "@/lib/evidence/pack";
import { evidencePackSchema } from "@/lib/evidence/schemas";
import { scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { idParamSchema, runtimeChoiceSchema } from "@/lib/outcome/record-fields";

// The invocation's evidence pack: its whole history as one canonical JSON document, signed (docs/audit.md).
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "An invocation's signed evidence pack",
  description:
    "Its identities, arguments (redacted) and digest, every attempt with its envelope, every transition, approvals, verifier asks and answers, the final state and decision, signed with Settle's Ed25519 key. The body is the canonical JSON that was signed; check it offline with `settle evidence verify`.",
  tags: ["Invocations"],
  errors: ["NOT_FOUND"],
  response: {
    200: {
      schema: evidencePackSchema,
      headers: { "Content-Disposition": "With download=1: attachment; filename=evidence-<invocation>.json" },
    },
  },
  params: z.object({ invocation_id: idParamSchema }),
  query: z.object({
    runtime: runtimeChoiceSchema,
    download: z.enum(["1"]).optional().describe("1: answered as a file to save."),
  }),
  handler: async ({ db, principal, params, query }) => {
    const pack = orNotFound(
      await getEvidencePack(db, scopeOf(principal), params.invocation_id, { runtime: query.runtime }),
      notVisible("invocation", params.invocation_id, query.runtime),
    );
    const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
    if (query.download) {
      const name = `evidence-${pack.pack.invocation.runtime}-${pack.pack.invocation.invocation_id}.json`;
      headers["content-disposition"] = `attachment; filename*=UTF-8''${encodeURIComponent(name)}`;
    }
    return new Response(`${canonicalJson(pack)}\n`, { status: 200, headers });
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
