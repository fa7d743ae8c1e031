import { otherMethods, withRoute } from "@/lib/http/route";
import { listSavedViews, savedViewInputSchema, saveView, savedViewSchema } from "@/lib/queue/saved-views";
import { itemsOf } from "@/lib/http/schemas";

// The signed-in person's saved queue views.
export const GET = withRoute({
  auth: "user",
  permission: "read",
  summary: "Your saved queue views",
  tags: ["Saved views"],
  response: itemsOf(savedViewSchema),
  handler: async ({ db, principal }) => ({ items: await listSavedViews(db, principal.user.id) }),
});

export const POST = withRoute({
  auth: "user",
  permission: "read",
  summary: "Save a queue view",
  tags: ["Saved views"],
  response: savedViewSchema,
  body: savedViewInputSchema,
  handler: ({ db, principal, body }) => saveView(db, principal.user.id, body),
});

export const { PUT, PATCH, DELETE } = otherMethods("GET", "POST");
