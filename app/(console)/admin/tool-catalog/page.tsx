import { ToolCatalogAdmin } from "@/components/admin/tool-catalog-admin";
import { NotAllowed } from "@/components/not-allowed";
import { listToolCatalogServed } from "@/lib/verify/liveness";
import { requireUser } from "@/lib/identity/session";
import { listRuntimeNames } from "@/lib/identity/runtime-keys";

export const dynamic = "force-dynamic";

export default async function ToolCatalogPage() {
  const { user, allowed, db } = await requireUser("administer", "/admin/tool-catalog");
  if (!allowed) return <NotAllowed role={user.role} what="only admins edit the tool catalog" />;
  const [entries, runtimes] = await Promise.all([listToolCatalogServed(db), listRuntimeNames(db)]);
  return <ToolCatalogAdmin initial={entries} runtimes={runtimes} />;
}
