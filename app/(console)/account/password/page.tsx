import { ChangePasswordForm } from "@/components/account/password-form";
import { requireUser } from "@/lib/identity/session";

export const dynamic = "force-dynamic";

export default async function PasswordPage() {
  const { user } = await requireUser("read", "/account/password", { whilePasswordMustChange: true });
  return (
    <main className="console-frame space-y-4 py-8">
      <div>
        <h1 className="text-xl font-semibold">Password</h1>
        <p className="mt-1 text-sm text-slate-600">
          Signed in as {user.email}. Lost it? An admin can reset it (Admin → Users), or on the server:{" "}
          <span className="font-mono">settle users reset-password --email {user.email}</span>.
        </p>
      </div>
      <ChangePasswordForm required={user.passwordMustChange} />
    </main>
  );
}
