import { listRuntimeKeys, revokeRuntimeKey, RUNTIME_KEY_PREFIX } from "@/lib/identity/runtime-keys";
import type { Command } from "../args";
import { withDatabase } from "../database";
import { CliError, UsageError } from "../errors";
import { printLine } from "../io";

const PREFIX = new RegExp(`^${RUNTIME_KEY_PREFIX}[a-z0-9]{8}`);

export const keysRevoke: Command = {
  name: "keys revoke",
  summary: "revoke a runtime ingest key by its prefix",
  help: `Usage: settle keys revoke <prefix>

Revokes the key whose prefix (as shown by 'keys list', e.g. stl_rk_ab12cd34)
is given. From its next request on, the key is refused with 401 KEY_REVOKED.
Revoking an already revoked key changes nothing.

Example:
  npm run -s settle -- keys revoke stl_rk_ab12cd34`,
  options: {},
  args: { min: 1, max: 1 },
  run: async ({ args }, io) => {
    // A whole key is accepted too (someone pasted it): only its prefix is used.
    const prefix = PREFIX.exec(args[0]!.trim())?.[0];
    if (!prefix)
      throw new UsageError(`'${args[0]}' is not a key prefix: prefixes look like ${RUNTIME_KEY_PREFIX}ab12cd34`);
    const { before, after } = await withDatabase(async (db) => {
      const known = (await listRuntimeKeys(db)).find((k) => k.prefix === prefix);
      return { before: known, after: known ? await revokeRuntimeKey(db, prefix) : null };
    });
    if (!before || !after) throw new CliError(`no key with prefix ${prefix} (see: settle keys list)`);
    if (before.revoked_at) {
      printLine(io.stdout, `Key ${prefix} (runtime ${after.runtime}) was already revoked at ${after.revoked_at}.`);
    } else {
      printLine(io.stdout, `Revoked key ${prefix} (runtime ${after.runtime}, name ${after.name}).`);
    }
    return 0;
  },
};
