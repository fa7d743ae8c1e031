import { z } from "zod";
import { orNotFound } from "@/lib/errors";
import { json, otherMethods, withRoute } from "@/lib/http/route";
import { deleteSavedView } from "@/lib/queue/saved-views";
import { deletedSchema } from "@/lib/http/schemas";

// Deleting one of one's own saved views; someone else's is not found.
export const DELETE = withRoute({
  auth: "user",
  permission: "read",
  summary: "Delete one of your saved views",
  tags: ["Saved views"],
  errors: ["NOT_FOUND"],
  response: deletedSchema,
  params: z.object({ id: z.uuid() }),
  handler: async ({ db, principal, params }) => {
    orNotFound(await deleteSavedView(db, principal.user.id, params.id), "You have no saved view with that id.");
    return json({ deleted: true });
  },
});

export const { GET, POST, PUT, PATCH } = otherMethods("DELETE");
