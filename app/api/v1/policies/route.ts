import { otherMethods, withRoute } from "@/lib/http/route";
import { listPolicies, policyListSchema } from "@/lib/policies/policies";

// The policy in effect for every effect class (and the default), with the latest changes; anyone signed in may read it.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  summary: "The policy in effect for every effect class, and the latest changes",
  tags: ["Policies"],
  response: policyListSchema,
  handler: ({ db }) => listPolicies(db),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
