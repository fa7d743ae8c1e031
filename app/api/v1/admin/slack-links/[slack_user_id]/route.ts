import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { deletedSchema } from "@/lib/http/schemas";
import { removeSlackLink } from "@/lib/slack/links";

// Unlink a Slack user: their clicks change nothing from now on.
export const DELETE = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Remove a Slack user's link (admins)",
  tags: ["Slack"],
  errors: ["NOT_FOUND"],
  response: deletedSchema,
  params: z.object({ slack_user_id: z.string().max(64) }),
  handler: ({ db, params, principal }) => removeSlackLink(db, params.slack_user_id, principal.user.email),
});

export const { GET, POST, PUT, PATCH } = otherMethods("DELETE");
