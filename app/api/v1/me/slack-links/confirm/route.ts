import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { confirmSlackLink, slackLinkConfirmSchema } from "@/lib/slack/link-codes";

// The second step: the code the bot posted. One guess: a wrong code ends it.
export const POST = withRoute({
  auth: "user",
  permission: "read",
  summary: "Finish linking your Slack user with the code Settle's bot posted you",
  tags: ["Slack"],
  response: z.object({ linked: z.string().describe("The Slack user id now linked to you.") }),
  body: slackLinkConfirmSchema,
  handler: ({ db, body, principal }) => confirmSlackLink(db, principal.user, body.code),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
