import { CURL_KEY, CURL_ORIGIN } from "@/components/admin/curl-template";
import { RuntimeKeysAdmin } from "@/components/admin/runtime-keys-admin";
import { NotAllowed } from "@/components/not-allowed";
import { requireUser } from "@/lib/identity/session";
import { listRuntimeKeys, listRuntimeNames } from "@/lib/identity/runtime-keys";
import { curlExample } from "@/lib/first-run";

export const dynamic = "force-dynamic";

export default async function RuntimeKeysPage() {
  const { user, allowed, db } = await requireUser("administer", "/admin/keys");
  if (!allowed) return <NotAllowed role={user.role} what="only admins manage runtime keys" />;
  const [keys, runtimes] = await Promise.all([listRuntimeKeys(db), listRuntimeNames(db)]);
  return <RuntimeKeysAdmin initial={keys} runtimes={runtimes} curlTemplate={curlExample(CURL_ORIGIN, CURL_KEY)} />;
}
