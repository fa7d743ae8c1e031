import { otherMethods, withRoute } from "@/lib/api/route";
import { listRecentInvocations } from "@/lib/domain/invocations";

// Recent invocations across runtimes, for the console's live list.
export const GET = withRoute({ auth: "user", permission: "read", handler: ({ db }) => listRecentInvocations(db) });

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
