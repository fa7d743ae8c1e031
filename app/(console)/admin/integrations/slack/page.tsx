import { NotAllowed } from "@/components/not-allowed";
import { SlackAdmin } from "@/components/slack/slack-admin";
import { requireUser } from "@/lib/identity/session";
import { listSlackLinks } from "@/lib/slack/links";
import { getSlackSettings } from "@/lib/slack/settings";

export const dynamic = "force-dynamic";

export default async function SlackIntegrationPage() {
  const { user, allowed, db } = await requireUser("administer", "/admin/integrations/slack");
  if (!allowed) return <NotAllowed role={user.role} what="only admins set up the Slack app" />;
  const [settings, links] = await Promise.all([getSlackSettings(db), listSlackLinks(db)]);
  return <SlackAdmin initial={settings} links={links} />;
}
