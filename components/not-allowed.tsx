export function NotAllowed({ role, what }: { role: string; what: string }) {
  return (
    <div role="alert" className="rounded-lg border border-slate-200 bg-white p-6">
      <h1 className="text-lg font-semibold">Not allowed</h1>
      <p className="mt-1 text-sm text-slate-600">
        Your role is <strong>{role}</strong>; {what}. Ask an admin if you need it.
      </p>
    </div>
  );
}
