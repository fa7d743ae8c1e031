import { listRuntimeKeys } from "@/lib/identity/runtime-keys";
import type { Command } from "../args";
import { withDatabase } from "../database";
import { printLine } from "../io";
import { formatTable, shortTime } from "../table";

export const keysList: Command = {
  name: "keys list",
  summary: "list runtime ingest keys",
  help: `Usage: settle keys list [--json]

Lists every runtime ingest key: its prefix (what identifies it in logs and in
'keys revoke'), runtime, name, when it was created, last used and revoked.
Times are UTC. Keys themselves are never shown again.

Options:
  --json   print a JSON array instead of a table

Example:
  npm run -s settle -- keys list`,
  options: { json: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const keys = await withDatabase((db) => listRuntimeKeys(db));
    if (values.json) {
      printLine(io.stdout, JSON.stringify(keys, null, 2));
      return 0;
    }
    if (keys.length === 0) {
      printLine(io.stderr, "No runtime keys yet. Create one with: settle keys create <runtime>");
      return 0;
    }
    const rows = keys.map((k) => [
      k.prefix,
      k.runtime,
      k.name,
      shortTime(k.created_at),
      shortTime(k.last_used_at),
      shortTime(k.revoked_at),
    ]);
    printLine(io.stdout, formatTable(["PREFIX", "RUNTIME", "NAME", "CREATED", "LAST USED", "REVOKED"], rows));
    return 0;
  },
};
