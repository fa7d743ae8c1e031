import { otherMethods, withRoute } from "@/lib/http/route";
import { checkHealth } from "@/lib/db/health";

// Liveness of Settle and its database; 503 with the error envelope when the database is down.
export const GET = withRoute({ auth: false, handler: ({ db }) => checkHealth(db) });

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
