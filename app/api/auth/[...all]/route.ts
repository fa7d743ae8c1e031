import { handleAuthRequest } from "@/lib/identity/auth-handler";

// Better Auth's endpoints (sign-in, sign-out, session), behind Settle's rules
// and error mapping: see lib/identity/auth-handler.ts.
export { handleAuthRequest as GET, handleAuthRequest as POST };
