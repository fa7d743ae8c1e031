import Link from "next/link";

// Settle's own 404 page: Next.js's built-in one writes an inline <style> the
// Content-Security-Policy blocks (it carries no nonce).
export default function NotFound() {
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="max-w-md space-y-3 text-center">
        <h1 className="text-xl font-semibold">This page could not be found.</h1>
        <p className="text-sm text-slate-600">The address may be mistyped, or what it pointed to no longer exists.</p>
        <Link href="/" className="text-sm font-medium text-indigo-700 underline">
          Go to the queue
        </Link>
      </div>
    </main>
  );
}
