import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { deletePolicy, policyInputSchema, policyKeySchema, putPolicy } from "@/lib/policies/policies";

const params = z.object({ effect_class: policyKeySchema });

// Admins set an effect class's own policy (the whole row); `*` is the default for classes without one.
export const PUT = withRoute({
  auth: "user",
  permission: "administer",
  params,
  body: policyInputSchema,
  handler: ({ db, principal, params, body }) => putPolicy(db, params.effect_class, body, actorOf(principal)),
});

// Admins remove a class's own policy: it uses the default again.
export const DELETE = withRoute({
  auth: "user",
  permission: "administer",
  params,
  handler: ({ db, principal, params }) => deletePolicy(db, params.effect_class, actorOf(principal)),
});

export const { GET, POST, PATCH } = otherMethods("PUT", "DELETE");
