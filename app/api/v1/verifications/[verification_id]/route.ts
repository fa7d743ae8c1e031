import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { answerVerification, answerResultSchema } from "@/lib/verify/answer";
import { findingSchema } from "@/lib/outcome/verification";

// A verifier's answer: found, not found, or could not tell (decision 027).
export const POST = withRoute({
  auth: "runtime",
  summary: "Answer a verification request",
  description:
    "`found: true` settles the invocation as committed; `found: false` as not committed once the first dispatch is `absent_after_s` old (earlier, Settle asks again later); `null` asks again. After `max_tries` asks without a settling answer, a person decides. Another runtime's or an unknown id is a 404; a request already answered, closed or not yet asked is a 409.",
  tags: ["Verifications"],
  errors: ["NOT_FOUND", "VERIFICATION_CLOSED"],
  response: answerResultSchema,
  params: z.object({ verification_id: z.uuid().describe("The id an item of GET /api/v1/verifications carried.") }),
  body: findingSchema,
  handler: ({ db, principal, params, body }) =>
    answerVerification(
      db,
      { runtimeId: principal.runtime.id, by: `runtime:${principal.runtime.name}`, via: "api" },
      params.verification_id,
      body,
    ),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
