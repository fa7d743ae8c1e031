import { json, otherMethods, withRoute } from "@/lib/http/route";
import { itemsOf } from "@/lib/http/schemas";
import { addSlackLink, listSlackLinks, newSlackLinkSchema, slackLinkSchema } from "@/lib/slack/links";

// Which Slack user acts as which person: only a linked operator, manager or admin can act from Slack.
export const GET = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Slack users linked to Settle people (admins)",
  tags: ["Slack"],
  response: itemsOf(slackLinkSchema),
  handler: async ({ db }) => ({ items: await listSlackLinks(db) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Link a Slack user to a Settle person (admins); a Slack user linked before moves to this person",
  tags: ["Slack"],
  errors: ["NOT_FOUND"],
  response: { 201: slackLinkSchema },
  body: newSlackLinkSchema,
  handler: async ({ db, body, principal }) => json(await addSlackLink(db, body, principal.user.email), 201),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
