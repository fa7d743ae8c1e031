import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { SignInForm } from "@/components/sign-in-form";
import { safeNext } from "@/lib/identity/safe-next";
import { currentUser } from "@/lib/identity/session";
import { env, publicUrl } from "@/lib/env";

export const dynamic = "force-dynamic";

type Mismatch = { expected: string; opened: string; configured: boolean };

/**
 * This page opened under another host than Settle's public address (SETTLE_PUBLIC_URL, or the
 * default http://localhost:PORT): with a configured address sign-in is refused "Invalid origin";
 * with the default, the links Settle writes (first-run banner, curl examples, event links) point elsewhere.
 */
async function wrongHost(expectedUrl: string): Promise<Mismatch | null> {
  const host = (await headers()).get("host");
  if (!host) return null;
  const expected = new URL(expectedUrl);
  if (expected.host === host) return null;
  return { expected: expected.origin, opened: host, configured: Boolean(env().SETTLE_PUBLIC_URL) };
}

function MismatchHint({ mismatch }: { mismatch: Mismatch }) {
  const link = (
    <a className="font-medium underline" href={`${mismatch.expected}/sign-in`}>
      {mismatch.expected}
    </a>
  );
  if (mismatch.configured) {
    return (
      <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
        Settle is configured for {link} (SETTLE_PUBLIC_URL), but this page was opened at {mismatch.opened}: signing in
        here will be refused. Open that address instead, or set SETTLE_PUBLIC_URL to this one and restart Settle.
      </p>
    );
  }
  return (
    <p role="status" className="rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-700">
      This page was opened at {mismatch.opened}, but Settle&apos;s address is {link} (the default; set SETTLE_PUBLIC_URL
      to change it). Links Settle writes point there; if signing in fails here, open that address instead.
    </p>
  );
}

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const next = safeNext((await searchParams).next);
  if (await currentUser()) redirect(next);
  const expectedUrl = publicUrl();
  const mismatch = await wrongHost(expectedUrl);
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm space-y-6 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <div>
          <h1 className="text-xl font-semibold">Sign in to Settle</h1>
          <p className="mt-1 text-sm text-slate-600">
            Accounts are created by an admin. On a new embedded database, the first admin&apos;s password was printed
            when Settle started.
          </p>
        </div>
        {mismatch ? <MismatchHint mismatch={mismatch} /> : null}
        <SignInForm next={next} expectedUrl={expectedUrl} />
      </div>
    </main>
  );
}
