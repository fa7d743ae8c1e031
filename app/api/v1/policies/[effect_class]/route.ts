import { z } from "zod";
import { actorOf } from "@/lib/identity/principal";
import { otherMethods, withRoute } from "@/lib/http/route";
import { deletePolicy, policyInputSchema, policyKeySchema, putPolicy, policySchema } from "@/lib/policies/policies";

const params = z.object({ effect_class: policyKeySchema });

// Admins set an effect class's own policy (the whole row); `*` is the default for classes without one.
export const PUT = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Set an effect class's own policy (admins)",
  description:
    "`effect_class` is money, destructive, send, create, read or `*` (the default for classes without their own row). The body is the whole policy: null switches a timer off for this class. overdue_after_s must be shorter than escalate_after_s.",
  tags: ["Policies"],
  response: { 200: { description: "The policy now in effect for the class.", schema: policySchema } },
  params,
  body: policyInputSchema,
  handler: ({ db, principal, params, body }) => putPolicy(db, params.effect_class, body, actorOf(principal)),
});

// Admins remove a class's own policy: it uses the default again.
export const DELETE = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Remove an effect class's own policy; it uses the default again (admins)",
  tags: ["Policies"],
  errors: ["NOT_FOUND"],
  response: { 200: { description: "The policy now in effect for the class.", schema: policySchema } },
  params,
  handler: ({ db, principal, params }) => deletePolicy(db, params.effect_class, actorOf(principal)),
});

export const { GET, POST, PATCH } = otherMethods("PUT", "DELETE");
