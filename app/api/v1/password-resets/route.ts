import { z } from "zod";
import { otherMethods, withRoute } from "@/lib/http/route";
import { redeemResetLink, resetLinkRedeemSchema } from "@/lib/identity/passwords";

// The one use of a reset link an admin made: its token (256 random bits, kept only as a hash) is the proof.
export const POST = withRoute({
  auth: false,
  summary: "Choose a new password with a one-time reset link's token",
  tags: ["Account"],
  errors: ["RESET_LINK_INVALID"],
  response: z.object({ email: z.string() }),
  body: resetLinkRedeemSchema,
  handler: async ({ db, body }) => redeemResetLink(db, body),
});

export const { GET, PUT, PATCH, DELETE } = otherMethods("POST");
