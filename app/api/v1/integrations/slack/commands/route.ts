import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { answerSlackCommand } from "@/lib/slack/commands";

// Slack's slash-command Request URL (`/settle link CODE`). Like the interactivity URL, its credential is
// Slack's signature over the raw body (lib/slack/signed-request.ts), not a Settle login.
export const POST = withRoute({
  auth: false,
  summary: "Slack's slash command /settle: link the Slack user who typed it with a code from Account → Slack",
  description:
    "Verified as Slack specifies: X-Slack-Signature is v0= HMAC-SHA256 over `v0:{X-Slack-Request-Timestamp}:{raw body}` with the app's signing secret, the timestamp within 5 minutes; a request seen before is refused. Anything else is a 401 and changes nothing. `link CODE` links the Slack user_id to the person the one-time code was made for (ten minutes, one use); anything else answers how. The answer is Slack's ephemeral message (docs/slack.md).",
  tags: ["Slack"],
  requestContent: {
    "application/x-www-form-urlencoded": z.object({
      command: z.string().describe("The command as typed, /settle."),
      text: z.string().describe("What followed it: `link CODE`."),
      user_id: z.string().describe("The Slack user who typed it."),
    }),
  },
  errors: ["UNAUTHENTICATED", "PAYLOAD_TOO_LARGE"],
  response: {
    200: z
      .object({ response_type: z.literal("ephemeral"), text: z.string() })
      .describe("Shown only to the person who typed the command."),
  },
  handler: ({ db, req }) => answerSlackCommand(db, req),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
