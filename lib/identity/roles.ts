// Who may do what. The server checks these on every page, route and action;
// hiding a button is never the enforcement. No zod here: this module also
// ships to the browser, to decide which controls to show.

export const roles = ["viewer", "operator", "manager", "admin"] as const;
export type Role = (typeof roles)[number];

export const permissions = {
  /** read queue, invocations, tasks, audit */
  read: ["viewer", "operator", "manager", "admin"],
  /** act on invocations: approve, verify, reconcile, escalate, assign, comment */
  act: ["operator", "manager", "admin"],
  /** metrics and the escalations managers handle */
  manage: ["manager", "admin"],
  /** users and runtime keys */
  administer: ["admin"],
  /** runtimes' webhook endpoints, their secrets and delivery logs */
  webhooks: ["admin"],
} as const satisfies Record<string, readonly Role[]>;
export type Permission = keyof typeof permissions;

export function can(role: Role | null | undefined, permission: Permission): boolean {
  return !!role && (permissions[permission] as readonly Role[]).includes(role);
}

export function parseRole(value: unknown): Role | null {
  return typeof value === "string" && (roles as readonly string[]).includes(value) ? (value as Role) : null;
}
