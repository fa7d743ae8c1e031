import { parseRole, type Role } from "./roles";
import { getAuth } from "./auth";

// The one reading of a Better Auth session into a Settle person, for pages
// (lib/identity/session.ts) and API routes (lib/identity/principal.ts) alike.

export type SessionUser = {
  id: string;
  email: string;
  name: string;
  role: Role;
  /** An admin reset this person's password to a temporary one: they must choose their own first. */
  passwordMustChange: boolean;
  /** The session this request came with: a password change ends every other one. */
  sessionId: string;
};

/**
 * The person a request's session cookie belongs to, or null: no session, no
 * valid role, deactivated, or an impersonation session (Settle records every
 * action under the person who did it, so a session that acts as someone else
 * is never accepted, whoever made it).
 */
export async function getSessionUser(headers: Headers): Promise<SessionUser | null> {
  const auth = await getAuth();
  const found = await auth.api.getSession({ headers });
  if (!found) return null;
  if ((found.session as { impersonatedBy?: string | null }).impersonatedBy) return null;
  const user = found.user as typeof found.user & {
    role?: string | null;
    banned?: boolean | null;
    passwordMustChange?: boolean | null;
  };
  const role = parseRole(user.role);
  if (!role || user.banned) return null;
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role,
    passwordMustChange: user.passwordMustChange === true,
    sessionId: found.session.id,
  };
}
