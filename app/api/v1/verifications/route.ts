import { otherMethods, withRoute } from "@/lib/http/route";
import { leaseVerifications, verificationItemsSchema, verificationsQuerySchema } from "@/lib/verify/lease";

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

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
