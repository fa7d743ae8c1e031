import { otherMethods, withRoute } from "@/lib/http/route";
import { issueSlackCommandCode, slackCommandCodeSchema } from "@/lib/slack/commands";

// Linking from Slack: a one-time code for you to type as `/settle link CODE` in Slack (ten minutes, one use).
export const POST = withRoute({
  auth: "user",
  permission: "read",
  summary: "A one-time code to link your Slack user by typing /settle link CODE in Slack",
  description:
    "A new code replaces your earlier one. Whoever types it in Slack links their Slack user to you: type it yourself, do not share it.",
  tags: ["Slack"],
  response: slackCommandCodeSchema,
  handler: ({ db, principal }) => issueSlackCommandCode(db, principal.user),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
