import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { deletedSchema } from "@/lib/http/schemas";
import { removeSlackLink } from "@/lib/slack/links";

// Account → Slack: a person removes a link of their own (a Slack account they left, a member id they mistyped
// and confirmed). Clicks by that Slack user change nothing from now on; the admin audit says who removed it.
export const DELETE = withRoute({
  auth: "user",
  permission: "read",
  summary: "Remove one of your own Slack links",
  tags: ["Slack"],
  errors: ["NOT_FOUND"],
  response: deletedSchema,
  params: z.object({ slack_user_id: z.string().max(64) }),
  handler: ({ db, params, principal }) =>
    removeSlackLink(db, params.slack_user_id, principal.user.email, principal.user.id),
});

export const { GET, POST, PUT, PATCH } = otherMethods("DELETE");
