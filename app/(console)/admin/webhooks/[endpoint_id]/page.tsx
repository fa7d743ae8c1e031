import { notFound } from "next/navigation";
import { NotAllowed } from "@/components/not-allowed";
import { EndpointAdmin } from "@/components/webhooks/endpoint-admin";
import { ApiError } from "@/lib/errors";
import { requireUser } from "@/lib/identity/session";
import { getWebhookEndpoint } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";

export default async function WebhookEndpointPage({ params }: { params: Promise<{ endpoint_id: string }> }) {
  const { endpoint_id } = await params;
  const { user, allowed, db } = await requireUser("webhooks", `/admin/webhooks/${encodeURIComponent(endpoint_id)}`);
  if (!allowed) return <NotAllowed role={user.role} what="only admins manage webhooks" />;
  const endpoint = await getWebhookEndpoint(db, endpoint_id).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === "NOT_FOUND") notFound();
    throw error;
  });
  return <EndpointAdmin initial={endpoint} />;
}
