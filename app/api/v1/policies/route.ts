import { otherMethods, withRoute } from "@/lib/http/route";
import { listPolicies } from "@/lib/policies/policies";

// The policy in effect for every effect class (and the default), with the latest changes; anyone signed in may read it.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  handler: ({ db }) => listPolicies(db),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
