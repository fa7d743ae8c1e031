import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { answerSlackInteraction } from "@/lib/slack/interactions";

// Slack's Interactivity Request URL. Its credential is Slack's signature over the raw body (checked in
// lib/slack/interactions.ts), not a Settle login: a request without a valid one is a 401 and changes nothing.
export const POST = withRoute({
  auth: false,
  summary: "Slack's interactivity requests: button clicks and modal submissions, signed by Slack",
  description:
    "Verified as Slack specifies: X-Slack-Signature is v0= HMAC-SHA256 over `v0:{X-Slack-Request-Timestamp}:{raw body}` with the app's signing secret, the timestamp within 5 minutes; a request seen before is refused. Anything else is a 401 and changes nothing. A click is answered at once and taken right after, as the Slack user's linked Settle person, through the same operator action as the console (docs/slack.md).",
  tags: ["Slack"],
  requestContent: {
    "application/x-www-form-urlencoded": z.object({
      payload: z.string().describe("Slack's block_actions or view_submission payload, as JSON."),
    }),
  },
  errors: ["UNAUTHENTICATED", "PAYLOAD_TOO_LARGE"],
  response: { 200: { description: "Taken (or nothing to take); a modal's validation errors as Slack reads them." } },
  handler: ({ db, req }) => answerSlackInteraction(db, req),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
