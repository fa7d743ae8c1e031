import { z } from "zod";
import { orNotFound } from "@/lib/errors";
import { scopeOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { getVerification, noVerificationSchema, verificationViewSchema } from "@/lib/verify/view";
import { idParamSchema, runtimeChoiceSchema } from "@/lib/outcome/record-fields";

// Where Settle's asking a verifier stands for one invocation: its page shows it beside the timeline.
export const GET = withRoute({
  auth: "any",
  permission: "read",
  summary: "Settle's verification of an invocation",
  description:
    "The newest verification request about it: its state, tries, when Settle asks next and every answer. When Settle never asked: `state: none`, saying whether the tool has a verifier. 404 only when there is no such call.",
  tags: ["Verifications"],
  errors: ["NOT_FOUND"],
  response: z.union([verificationViewSchema, noVerificationSchema]),
  params: z.object({ invocation_id: idParamSchema }),
  query: z.object({
    runtime: runtimeChoiceSchema,
  }),
  handler: async ({ db, principal, params, query }) => {
    const found = await getVerification(db, scopeOf(principal), params.invocation_id, query.runtime);
    return orNotFound(found, `No invocation ${params.invocation_id}.`);
  },
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
