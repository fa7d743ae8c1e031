import { handleAuthRequest } from "@/lib/auth/handler";

// Better Auth's endpoints (sign-in, sign-out, session), behind Settle's rules
// and error mapping: see lib/auth/handler.ts.
export { handleAuthRequest as GET, handleAuthRequest as POST };
