import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { stringOption, type Command } from "../args";
import { describeDatabase, withDatabase } from "../database";
import { UsageError } from "../errors";
import { printLine } from "../io";

const RUNTIME_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;

export const keysCreate: Command = {
  name: "keys create",
  summary: "create a runtime ingest key and print it",
  help: `Usage: settle keys create <runtime> [--name <name>]

Creates an ingest key for <runtime> (the runtime is created if it is new) and
prints the key, and nothing else, on stdout. The key is shown only this once;
Settle keeps only its hash.

Options:
  --name <name>   a label for the key, e.g. where it is deployed (default: "default")

Example:
  KEY=$(npm run -s settle -- keys create billing-agent --name prod)`,
  options: { name: { type: "string" } },
  args: { min: 1, max: 1 },
  run: async ({ values, args }, io) => {
    const runtime = args[0]!;
    if (!RUNTIME_NAME.test(runtime)) {
      throw new UsageError(`runtime name '${runtime}' must be 1-100 letters, digits, '.', '_', ':' or '-'`);
    }
    const name = stringOption(values, "name") ?? "default";
    if (name.trim() === "" || name.length > 100) throw new UsageError("--name must be 1-100 characters");
    const created = await withDatabase((db) => createRuntimeKey(db, runtime, name.trim()));
    printLine(io.stdout, created.key);
    printLine(
      io.stderr,
      `Created key ${created.prefix} for runtime ${created.runtime} in ${describeDatabase()}. It is shown only once: store it now.`,
    );
    return 0;
  },
};
