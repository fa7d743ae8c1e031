import { getDb } from "./db/client";
import { createRuntimeKey } from "./identity/runtime-keys";
import { countUsers, createUser } from "./identity/users";
import { noteServerAddress } from "./identity/server-address";
import { env, publicUrl } from "./env";
import { ensureEvidenceKey } from "./evidence/keys";
import { outcomeUnknownExample } from "./outcome/example-envelopes";

// At start-up Settle notes where people reach it (for the CLI's links), makes its evidence signing key if it
// has none, and on an empty embedded database it makes itself usable at once: a runtime key named "local"
// and an admin, each printed once.

export const FIRST_ADMIN_EMAIL = "admin@settle.local";

const sample = {
  task_id: "ord-7741",
  invocation_id: "inv-7f3",
  attempt: 1,
  tool: "create_invoice",
  effect_class: "create",
  envelope: outcomeUnknownExample,
};

export function curlExample(url: string, key: string): string {
  return [
    `curl -sS ${url}/api/v1/envelopes \\`,
    `  -H "Authorization: Bearer ${key}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${JSON.stringify(sample)}'`,
  ].join("\n");
}

export async function firstRun(log: (line: string) => void = console.log): Promise<void> {
  const settings = env();
  const db = await getDb();
  const url = publicUrl();
  await noteServerAddress(db, url);
  // Made at first start, like the auth secret: every pack is signed with it (lib/evidence/keys.ts).
  const evidenceKey = await ensureEvidenceKey(db);
  if (evidenceKey.created) log(`Settle: made the evidence signing key ${evidenceKey.keyId} (settle evidence key).`);
  const where = settings.DATABASE_URL
    ? "PostgreSQL (DATABASE_URL)"
    : `the embedded database in ${settings.SETTLE_DATA_DIR}`;
  const lines: string[] = [];

  if (settings.DATABASE_URL) {
    if ((await countUsers(db)) === 0) {
      lines.push(
        `Settle: no users yet. Create an admin: npm run -s settle -- users create --email you@example.com --role admin`,
      );
    }
    log(lines.length ? lines.join("\n") : `Settle: using ${where}.`);
    return;
  }

  if ((await db.prisma.runtimeKey.count()) === 0) {
    const { key } = await createRuntimeKey(db, "local", "local", "first-run");
    lines.push(
      `A runtime ingest key named "local" was created. It is shown only this once; copy it now:`,
      "",
      `  ${key}`,
      "",
      "Send a first envelope (an unknown outcome, so it shows up as needing a person):",
      "",
      curlExample(url, key),
      "",
    );
  }
  if ((await countUsers(db)) === 0) {
    const { password } = await createUser(db, { email: FIRST_ADMIN_EMAIL, role: "admin", name: "Admin" });
    lines.push(
      `An admin was created. Sign in at ${url}/sign-in with`,
      "",
      `  email:    ${FIRST_ADMIN_EMAIL}`,
      `  password: ${password}`,
      "",
      "(shown only this once; add people under Admin → Users, or: npm run -s settle -- users create --email E --role operator)",
      "",
    );
  }
  if (lines.length === 0) {
    log(`Settle: using ${where}. More runtime keys: npm run -s settle -- keys create <runtime>`);
    return;
  }
  log(["", `Settle is using ${where}.`, ...lines, `Then open ${url}.`, ""].join("\n"));
}
