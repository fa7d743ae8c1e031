import { otherMethods, withRoute } from "@/lib/http/route";
import { livenessSchema } from "@/lib/http/schemas";

// Liveness: the process answers. It never touches the database, so a database
// outage makes instances unready (/api/health/ready), not restarted.
export const GET = withRoute({
  auth: false,
  database: false,
  summary: "Liveness: this Settle process is up and serving",
  tags: ["Meta"],
  response: livenessSchema,
  handler: async () => ({ ok: true as const }),
});

export const { POST, PUT, PATCH, DELETE } = otherMethods("GET");
