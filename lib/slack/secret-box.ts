import "server-only";
import { openWithAuthSecret, sealWithAuthSecret } from "../identity/sealed";

// The Slack app's signing secret and bot token must be read back (one signs, one posts), so they are kept
// sealed under the auth secret (lib/identity/sealed.ts, decision 042), not hashed. A database dump alone
// does not give them away. A changed auth secret makes them unreadable: the admin enters them again.

const PURPOSE = "slack-app-secrets";

export function sealSecret(plain: string): string {
  return sealWithAuthSecret(PURPOSE, Buffer.from(plain, "utf8"));
}

/** The secret, or null when it cannot be opened (another auth secret sealed it, or it was altered). */
export function openSecret(sealed: string): string | null {
  return openWithAuthSecret(PURPOSE, sealed)?.toString("utf8") ?? null;
}
