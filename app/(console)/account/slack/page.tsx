import { AccountSlack } from "@/components/slack/account-slack";
import { requireUser } from "@/lib/identity/session";
import { listSlackLinks } from "@/lib/slack/links";
import { getSlackSettings } from "@/lib/slack/settings";

export const dynamic = "force-dynamic";

export default async function AccountSlackPage() {
  const { user, db } = await requireUser("read", "/account/slack");
  const [settings, links] = await Promise.all([getSlackSettings(db), listSlackLinks(db, user.id)]);
  return (
    <main className="console-frame py-8">
      <AccountSlack configured={settings.configured} initial={links} />
    </main>
  );
}
