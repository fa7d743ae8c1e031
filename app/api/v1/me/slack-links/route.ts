import { otherMethods, withRoute } from "@/lib/http/route";
import { itemsOf } from "@/lib/http/schemas";
import { listSlackLinks, slackLinkSchema } from "@/lib/slack/links";
import { slackLinkStartedSchema, slackLinkStartSchema, startSlackLink } from "@/lib/slack/link-codes";

// Your own Slack identities (Account → Slack), and the first step of linking one: the bot posts you a code.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  summary: "The Slack users linked to you",
  tags: ["Slack"],
  response: itemsOf(slackLinkSchema),
  handler: async ({ db, principal }) => ({ items: await listSlackLinks(db, principal.user.id) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "read",
  summary: "Start linking your Slack user: Settle's bot posts you a one-time code in Slack",
  tags: ["Slack"],
  response: slackLinkStartedSchema,
  body: slackLinkStartSchema,
  handler: ({ db, body, principal }) => startSlackLink(db, principal.user, body.slack_user_id),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
