import { otherMethods, withRoute } from "@/lib/http/route";
import { listSavedViews, savedViewInputSchema, saveView } from "@/lib/queue/saved-views";

// The signed-in person's saved queue views.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  handler: async ({ db, principal }) => ({ items: await listSavedViews(db, principal.user.id) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "read",
  body: savedViewInputSchema,
  handler: ({ db, principal, body }) => saveView(db, principal.user.id, body),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
