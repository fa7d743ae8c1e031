import { redirect } from "next/navigation";
import { SignInForm } from "@/components/sign-in-form";
import { currentUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

function safeNext(value: string | string[] | undefined): string {
  const next = Array.isArray(value) ? value[0] : value;
  // Only paths on this site: never an open redirect.
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/";
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNext((await searchParams).next);
  if (await currentUser()) redirect(next);
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm space-y-6 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <div>
          <h1 className="text-xl font-semibold">Sign in to Settle</h1>
          <p className="mt-1 text-sm text-slate-600">Accounts are created by an admin. On a new embedded database, the first admin&apos;s password was printed when Settle started.</p>
        </div>
        <SignInForm next={next} />
      </div>
    </main>
  );
}
