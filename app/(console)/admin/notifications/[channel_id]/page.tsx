import { notFound } from "next/navigation";
import { NotAllowed } from "@/components/not-allowed";
import { ChannelAdmin } from "@/components/notifications/channel-admin";
import { ApiError } from "@/lib/errors";
import { requireUser } from "@/lib/identity/session";
import { getNotificationChannel } from "@/lib/notifications/channels";

export const dynamic = "force-dynamic";

export default async function NotificationChannelPage({ params }: { params: Promise<{ channel_id: string }> }) {
  const { channel_id } = await params;
  const { user, allowed, db } = await requireUser("webhooks", `/admin/notifications/${encodeURIComponent(channel_id)}`);
  if (!allowed) return <NotAllowed role={user.role} what="only admins manage notifications" />;
  const channel = await getNotificationChannel(db, channel_id).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === "NOT_FOUND") notFound();
    throw error;
  });
  return <ChannelAdmin initial={channel} />;
}
