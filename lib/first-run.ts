import { getDb } from "./db/client";
import { createRuntimeKey } from "./domain/runtime-keys";
import { env, publicUrl } from "./env";

// On an empty embedded database, Settle makes itself usable at once: a
// runtime key named "local", printed once with a request to paste.

const sample = {
  task_id: "ord-7741",
  invocation_id: "inv-7f3",
  attempt: 1,
  tool: "create_invoice",
  effect_class: "create",
  envelope: {
    ok: false,
    code: "OUTCOME_UNKNOWN",
    category: "dependency",
    commit_state: "unknown",
    retry: { directive: "never", max_attempts_remaining: 0 },
    next_action: "verify_operation",
    operation_ref: "run_81/step_4",
    agent_message: "The write may have completed. Verify operation_ref before any new write.",
    user_message: "The request is being checked before anything is sent again.",
  },
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
  const runtimes = await db.prisma.runtimeKey.count();
  const url = publicUrl();
  const where = settings.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : `the embedded database in ${settings.SETTLE_DATA_DIR}`;
  if (runtimes > 0 || settings.DATABASE_URL) {
    log(`Settle: using ${where}. Create a runtime key with: npm run -s settle -- keys create <runtime>`);
    return;
  }
  const { key } = await createRuntimeKey(db, "local", "local");
  log(
    [
      "",
      `Settle is using ${where}.`,
      `A runtime ingest key named "local" was created. It is shown only this once; copy it now:`,
      "",
      `  ${key}`,
      "",
      "Send a first envelope (an unknown outcome, so it shows up as needing a person):",
      "",
      curlExample(url, key),
      "",
      `Then open ${url} to watch it arrive. More keys: npm run -s settle -- keys create <runtime>`,
      "",
    ].join("\n"),
  );
}
