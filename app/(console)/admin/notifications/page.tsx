import { NotAllowed } from "@/components/not-allowed";
import { NotificationsAdmin } from "@/components/notifications/notifications-admin";
import { requireUser } from "@/lib/identity/session";
import { listRuntimeNames } from "@/lib/identity/runtime-keys";
import { emailConfigured, listNotificationChannels } from "@/lib/notifications/channels";

export const dynamic = "force-dynamic";

export default async function NotificationsPage() {
  const { user, allowed, db } = await requireUser("webhooks", "/admin/notifications");
  if (!allowed) return <NotAllowed role={user.role} what="only admins manage notifications" />;
  const [channels, runtimes] = await Promise.all([listNotificationChannels(db), listRuntimeNames(db)]);
  return <NotificationsAdmin initial={channels} runtimes={runtimes} emailReady={emailConfigured()} />;
}
