import { createAccessControl } from "better-auth/plugins/access";
import { adminAc, defaultStatements } from "better-auth/plugins/admin/access";

// Better Auth's own admin endpoints (create user, set role, ban) follow the
// same roles: only `admin` may use them.
export const ac = createAccessControl({ ...defaultStatements });

export const accessRoles = {
  viewer: ac.newRole({ user: [], session: [] }),
  operator: ac.newRole({ user: [], session: [] }),
  manager: ac.newRole({ user: [], session: [] }),
  admin: ac.newRole({ ...adminAc.statements }),
};
