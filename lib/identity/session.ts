import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { getDb, type Db } from "../db/client";
import { can, type Permission } from "./roles";
import { getSessionUser, type SessionUser } from "./session-user";

// For server components and server actions: the signed-in person, or a
// redirect to sign-in. Pages call this before reading anything.

export type { SessionUser };

/** Once per request: the layout and the page both ask, and each ask is a session read. */
export const currentUser = cache(async (): Promise<SessionUser | null> => getSessionUser(await headers()));

/**
 * The signed-in user, and whether they hold `permission`; redirects to
 * sign-in when nobody is signed in. A page shows <NotAllowed> when not allowed.
 */
export async function requireUser(
  permission: Permission,
  next = "/",
  { whilePasswordMustChange = false } = {},
): Promise<{ user: SessionUser; allowed: boolean; db: Db }> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(next)}`);
  // An admin's temporary password: nothing else until the person has chosen their own.
  if (user.passwordMustChange && !whilePasswordMustChange) redirect("/account/password?required=1");
  // Pages read through lib/ functions with this handle: they never import the database layer themselves.
  return { user, allowed: can(user.role, permission), db: await getDb() };
}
