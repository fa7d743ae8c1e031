import { otherMethods, withRoute } from "@/lib/http/route";
import {
  getSlackSettings,
  setSlackSettings,
  slackSettingsInputSchema,
  slackSettingsSchema,
} from "@/lib/slack/settings";

// The Slack app that acts on messages (docs/slack.md): its secrets go in and never come out.
export const GET = withRoute({
  auth: "user",
  permission: "administer",
  summary: "The Slack app's settings, without its secrets (admins)",
  tags: ["Slack"],
  response: slackSettingsSchema,
  handler: ({ db }) => getSlackSettings(db),
});

export const PUT = withRoute({
  auth: "user",
  permission: "administer",
  summary: "Set the Slack app's signing secret, bot token, Web API address and per-class actions (admins)",
  description:
    "The secrets are stored encrypted and never answered. Left out, a secret is kept (both are needed the first time); a class left out of `actions` keeps its list.",
  tags: ["Slack"],
  errors: ["UNSAFE_URL"],
  response: slackSettingsSchema,
  body: slackSettingsInputSchema,
  handler: ({ db, body, principal }) => setSlackSettings(db, body, principal.user.email),
});

export const { POST, PATCH, DELETE } = otherMethods("GET", "PUT");
