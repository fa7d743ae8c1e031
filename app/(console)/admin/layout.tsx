import type { ReactNode } from "react";

// The frame of every admin page. Each page still checks its own permission
// (admins, webhooks, or anyone for policies) before it reads anything: a
// layout is not rendered again when a person moves between the pages under
// it, so it cannot stand guard for them.
export default function AdminLayout({ children }: { children: ReactNode }) {
  return <main className="console-frame py-8">{children}</main>;
}
