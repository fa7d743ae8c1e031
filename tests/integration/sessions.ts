import { POST as authPost } from "@/app/api/auth/[...all]/route";

// A person signed in through Better Auth's own endpoint, as the console does: the session cookie to send,
// with the Origin a cookie-bearing change must carry.

export const ORIGIN = "http://settle.test";

export async function signIn(email: string, password: string): Promise<{ status: number; cookie: string | null }> {
  const res = await authPost(
    new Request(`${ORIGIN}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: ORIGIN },
      body: JSON.stringify({ email, password }),
    }),
  );
  const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token"));
  return { status: res.status, cookie: cookie ? cookie.split(";")[0]! : null };
}

/** The headers of a request made with this session from Settle's own pages. */
export const asSession = (cookie: string) => ({ cookie, origin: ORIGIN });
