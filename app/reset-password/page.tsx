import { ResetPasswordForm } from "@/components/account/password-form";

export const dynamic = "force-dynamic";

// Opened from an admin's one-time reset link; the token is checked when the form is sent, once.
export default async function ResetPasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const raw = (await searchParams).token;
  const token = typeof raw === "string" ? raw : "";
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm space-y-6 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
        <div>
          <h1 className="text-xl font-semibold">Choose a new password</h1>
          <p className="mt-1 text-sm text-slate-600">
            This link works once. Afterwards, sign in with the new password.
          </p>
        </div>
        {token ? (
          <ResetPasswordForm token={token} />
        ) : (
          <p role="alert" className="text-sm text-rose-700">
            This page needs the link an admin gave you, whole: it ends in ?token=…
          </p>
        )}
      </div>
    </main>
  );
}
