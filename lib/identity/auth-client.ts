"use client";

import { createAuthClient } from "better-auth/react";

// The browser side of Better Auth: same origin, so no base URL to configure.
export const authClient = createAuthClient();
