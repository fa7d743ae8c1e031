import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/sign-in-form";
import { safeNext } from "@/lib/identity/safe-next";
import { currentUser } from "@/lib/identity/session";
import { env } from "@/lib/env";

export const dynamic = "force-dynamic";

/** When this page was opened under another host than SETTLE_PUBLIC_URL, sign-in would fail "Invalid origin": say so first. */
async function wrongHost(): Promise<{ expected: string; opened: string } | null> {
  const configured = env().SETTLE_PUBLIC_URL;
  const host = (await headers()).get("host");
  if (!configured || !host) return null;
  const expected = new URL(configured);
  return expected.host === host ? null : { expected: expected.origin, opened: host };
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNext((await searchParams).next);
  if (await currentUser()) redirect(next);
  const mismatch = await wrongHost();
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm space-y-6 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <div>
          <h1 className="text-xl font-semibold">Sign in to Settle</h1>
          <p className="mt-1 text-sm text-slate-600">Accounts are created by an admin. On a new embedded database, the first admin&apos;s password was printed when Settle started.</p>
        </div>
        {mismatch ? (
          <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
            Settle is configured for <a className="font-medium underline" href={`${mismatch.expected}/sign-in`}>{mismatch.expected}</a> (SETTLE_PUBLIC_URL),
            but this page was opened at {mismatch.opened}: signing in here will be refused. Open that address instead, or set
            SETTLE_PUBLIC_URL to this one and restart Settle.
          </p>
        ) : null}
        <SignInForm next={next} />
      </div>
    </main>
  );
}
