import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { can, parseRole, type Permission, type Role } from "./roles";
import { getAuth } from "./server";

// For server components and server actions: the signed-in person, or a
// redirect to sign-in. Pages call this before reading anything.

export type SessionUser = { id: string; email: string; name: string; role: Role };

/** Once per request: the layout and the page both ask, and each ask is a session read. */
export const currentUser = cache(async (): Promise<SessionUser | null> => {
  const auth = await getAuth();
  const session = await auth.api.getSession({ headers: await headers() });
  if (!session) return null;
  const user = session.user as typeof session.user & { role?: string | null; banned?: boolean | null };
  const role = parseRole(user.role);
  if (!role || user.banned) return null;
  return { id: user.id, email: user.email, name: user.name, role };
});

/**
 * The signed-in user, and whether they hold `permission`; redirects to
 * sign-in when nobody is signed in. A page shows <NotAllowed> when not allowed.
 */
export async function requireUser(permission: Permission, next = "/"): Promise<{ user: SessionUser; allowed: boolean }> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(next)}`);
  return { user, allowed: can(user.role, permission) };
}
