import { NotAllowed } from "@/components/not-allowed";
import { WebhooksAdmin } from "@/components/webhooks/webhooks-admin";
import { requireUser } from "@/lib/identity/session";
import { listRuntimeNames } from "@/lib/identity/runtime-keys";
import { listWebhookEndpoints } from "@/lib/webhooks/endpoints";

export const dynamic = "force-dynamic";

export default async function WebhooksPage() {
  const { user, allowed, db } = await requireUser("webhooks", "/admin/webhooks");
  if (!allowed) return <NotAllowed role={user.role} what="only admins manage webhooks" />;
  const [endpoints, runtimes] = await Promise.all([listWebhookEndpoints(db), listRuntimeNames(db)]);
  return <WebhooksAdmin initial={endpoints} runtimes={runtimes} />;
}
