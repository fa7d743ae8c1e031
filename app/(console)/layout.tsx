import { headers } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { CurrentUserProvider } from "@/components/current-user";
import { SignOutButton } from "@/components/sign-out-button";
import { listBrokenChainsForBanner } from "@/lib/chain/watch";
import { can } from "@/lib/identity/roles";
import { requireUser } from "@/lib/identity/session";

export const dynamic = "force-dynamic";

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  // Each page sends a person whose password must change to Account → Password (requireUser); the frame
  // around it, which that page shares, does not.
  const { user } = await requireUser("read", (await headers()).get("x-settle-path") ?? "/", {
    whilePasswordMustChange: true,
  });
  const links = [
    { href: "/", label: "Queue" },
    { href: "/audit", label: "Audit" },
    ...(can(user.role, "manage") ? [{ href: "/metrics", label: "Metrics" }] : []),
    ...(can(user.role, "administer")
      ? [
          { href: "/admin/users", label: "Users" },
          { href: "/admin/keys", label: "Runtime keys" },
          { href: "/admin/tool-catalog", label: "Tool catalog" },
          { href: "/admin/integrations/slack", label: "Slack app" },
        ]
      : []),
    ...(can(user.role, "webhooks")
      ? [
          { href: "/admin/webhooks", label: "Webhooks" },
          { href: "/admin/notifications", label: "Notifications" },
        ]
      : []),
    // Everyone may read the policies; only admins edit them (the page and the API check).
    { href: "/admin/policies", label: "Policies" },
    { href: "/admin/retention", label: "Data retention" },
  ];
  // The hourly check of the audit trail's hash chains (docs/audit.md): a broken chain is every admin's business.
  const brokenChains = can(user.role, "administer") ? await listBrokenChainsForBanner() : [];
  const accountLinks = [
    { href: "/account/tokens", label: "Access tokens" },
    { href: "/account/password", label: "Password" },
    { href: "/account/slack", label: "Slack" },
  ];
  const linkClass = "whitespace-nowrap rounded-md px-2 py-1 text-slate-700 hover:bg-slate-100 hover:text-slate-900";
  return (
    <div className="min-h-screen">
      <header className="border-b border-slate-200 bg-white">
        <div className="console-frame flex flex-wrap items-center gap-x-6 gap-y-2 py-3">
          <Link href="/" className="text-base font-semibold tracking-tight">
            Settle
          </Link>
          <nav aria-label="Main" className="flex flex-wrap gap-1 text-sm">
            {links.map((l) => (
              <Link key={l.href} href={l.href} className={linkClass}>
                {l.label}
              </Link>
            ))}
          </nav>
          <div className="ml-auto flex items-center gap-3 whitespace-nowrap text-sm">
            <nav aria-label="Account" className="flex gap-1">
              {accountLinks.map((l) => (
                <Link key={l.href} href={l.href} className={linkClass}>
                  {l.label}
                </Link>
              ))}
            </nav>
            <span className="text-slate-700">{user.email}</span>
            <span className="rounded-full bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-700">
              {user.role}
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      {brokenChains.length > 0 ? (
        <div role="alert" data-testid="audit-chain-broken" className="bg-rose-700 text-white">
          <div className="console-frame py-2 text-sm">
            <p className="font-semibold">
              The audit trail was changed outside Settle: a hash chain is broken. Run settle audit verify.
            </p>
            <ul className="list-disc pl-5">
              {brokenChains.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          </div>
        </div>
      ) : null}
      <CurrentUserProvider user={user}>{children}</CurrentUserProvider>
    </div>
  );
}
