import { PersonalTokens } from "@/components/account/personal-tokens";
import { requireUser } from "@/lib/identity/session";
import { listPersonalTokens } from "@/lib/identity/personal-tokens";

export const dynamic = "force-dynamic";

export default async function AccessTokensPage() {
  const { user, db } = await requireUser("read", "/account/tokens");
  const tokens = await listPersonalTokens(db, user.id);
  return (
    <main className="console-frame py-8">
      <PersonalTokens initial={tokens} />
    </main>
  );
}
