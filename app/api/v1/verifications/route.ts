import { otherMethods, withRoute } from "@/lib/http/route";
import { leaseVerifications, verificationItemsSchema, verificationsQuerySchema } from "@/lib/verify/lease";
import { answerBatchResultSchema, answerBatchSchema, answerVerificationBatch, MAX_ANSWERS } from "@/lib/verify/answer";

// A verifier worker's pull: its runtime's due verification requests, each leased to it (decision 027).
export const GET = withRoute({
  auth: "runtime",
  summary: "Take due verification requests of this runtime (long poll)",
  description:
    "Settle asks a runtime to look up whether an unknown call took effect when the tool's catalog entry has `verify`. Each item is leased to the caller for the entry's `lease_s` and counted as a try: two workers never get the same item. Answer each at POST /api/v1/verifications/{id}. `wait=N` holds the request up to N seconds until there is work; an empty list means none.",
  tags: ["Verifications"],
  response: verificationItemsSchema,
  query: verificationsQuerySchema,
  handler: ({ req, db, principal, query }) =>
    leaseVerifications(
      db,
      principal.runtime,
      `runtime:${principal.runtime.name}${query.worker ? `/${query.worker}` : ""}`,
      query,
      req.signal,
    ),
});

// A worker's answers to several asks at once: one request, one ingest call, one statement (decision 027).
export const POST = withRoute({
  auth: "runtime",
  summary: "Answer several verification requests at once",
  description: `Up to ${MAX_ANSWERS} answers (and 64 KiB) in one request, each read as POST /api/v1/verifications/{id} reads one: the results come back in the order sent, and an answer that is refused (an unknown or another runtime's id: NOT_FOUND; answered, closed or not yet asked: VERIFICATION_CLOSED) carries its error without failing the others.`,
  tags: ["Verifications"],
  response: answerBatchResultSchema,
  body: answerBatchSchema,
  handler: ({ db, principal, body }) =>
    answerVerificationBatch(
      db,
      { runtimeId: principal.runtime.id, by: `runtime:${principal.runtime.name}`, via: "api" },
      body,
    ),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
