import { handleAuthRequest } from "@/lib/http/auth-handler";

// Better Auth's endpoints (sign-in, sign-out, session), behind Settle's rules
// and error mapping: see lib/http/auth-handler.ts.
export { handleAuthRequest as GET, handleAuthRequest as POST };
