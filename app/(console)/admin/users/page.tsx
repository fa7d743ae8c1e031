import { UsersAdmin } from "@/components/admin/users-admin";
import { NotAllowed } from "@/components/not-allowed";
import { requireUser } from "@/lib/identity/session";
import { listUsers } from "@/lib/identity/users";

export const dynamic = "force-dynamic";

export default async function UsersPage() {
  const { user, allowed, db } = await requireUser("administer", "/admin/users");
  if (!allowed) return <NotAllowed role={user.role} what="only admins manage users" />;
  return <UsersAdmin initial={await listUsers(db)} />;
}
