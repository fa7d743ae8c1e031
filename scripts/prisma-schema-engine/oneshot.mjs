// `BIN --datasource '{…}' cli <command>`: the CLI runs these before
// `migrate dev` (and friends) to create a missing database. It reads only the
// exit status and, on failure, stderr lines 2.. as JSON log records whose
// ERROR entry from target schema_engine::logger carries the Prisma error code.
import pg from "pg";
import { parseDatabaseUrl, quoteIdent, withAdminClient } from "./adapters.mjs";
import { logRecord } from "./server.mjs";

function prismaError(error, target) {
  switch (error?.code) {
    case "3D000":
      return [
        "P1003",
        `Database \`${target.database}\` does not exist on the database server at \`${target.location}\`.`,
      ];
    case "ECONNREFUSED":
    case "ENOTFOUND":
    case "ETIMEDOUT":
      return ["P1001", `Can't reach database server at \`${target.location}\``];
    case "28P01":
    case "28000":
      return ["P1000", `Authentication failed against database server at \`${target.location}\`: ${error.message}`];
    case "42P04":
      return [
        "P1009",
        `Database \`${target.database}\` already exists on the database server at \`${target.location}\``,
      ];
    default:
      return ["P1010", error?.message ?? String(error)];
  }
}

export async function runOneShot(command, datasource) {
  const out = (line) => process.stderr.write(line + "\n");
  let target;
  try {
    target = parseDatabaseUrl(datasource.url ?? "");
    switch (command) {
      case "can-connect-to-database": {
        const client = new pg.Client({ connectionString: target.connectionString });
        try {
          await client.connect();
          await client.query("SELECT 1");
        } finally {
          await client.end().catch(() => {});
        }
        break;
      }
      case "create-database":
        await withAdminClient(target, (c) => c.query(`CREATE DATABASE ${quoteIdent(target.database)}`));
        break;
      case "drop-database":
        await withAdminClient(target, (c) => c.query(`DROP DATABASE ${quoteIdent(target.database)}`));
        break;
      default:
        throw Object.assign(new Error(`Unknown cli command: ${command}`), { code: "BRIDGE" });
    }
    return 0;
  } catch (error) {
    const [code, message] = target ? prismaError(error, target) : ["P1012", error.message];
    out(logRecord("INFO", `schema-engine bridge: cli ${command}`));
    out(JSON.stringify({ level: "ERROR", target: "schema_engine::logger", fields: { error_code: code, message } }));
    return 1;
  }
}
