"use client";

import { createContext, useContext, type ReactNode } from "react";
import { can, type Permission, type Role } from "@/lib/identity/roles";

// The signed-in person, as the server resolved it, for client components.
// Only for showing the right controls: the server checks every request again.

export type CurrentUser = { id: string; email: string; name: string; role: Role };

const Context = createContext<CurrentUser | null>(null);

export function CurrentUserProvider({ user, children }: { user: CurrentUser; children: ReactNode }) {
  return <Context.Provider value={user}>{children}</Context.Provider>;
}

export function useCurrentUser(): CurrentUser {
  const user = useContext(Context);
  if (!user) throw new Error("useCurrentUser outside the console layout");
  return user;
}

export function useCan(permission: Permission): boolean {
  return can(useContext(Context)?.role, permission);
}
