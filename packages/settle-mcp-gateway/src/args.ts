// The command line: `settle-mcp [options] -- <server command> [args…]` for
// stdio, `settle-mcp [options] --listen <port> --upstream <url>` for
// Streamable HTTP.

export type Args = {
  config?: string;
  settleUrl?: string;
  key?: string;
  dryRun: boolean;
  listen?: { port: number; host: string };
  upstream?: string;
  command?: { command: string; args: string[] };
  help: boolean;
  printSchema: boolean;
};

export class UsageError extends Error {}

export const usage = `Usage:
  settle-mcp [options] -- <server command> [args...]     stdio: the client launches this
  settle-mcp [options] --listen <port> --upstream <url>  Streamable HTTP

Every tools/call is recorded in Settle, asked of its guard first, and never
sent twice blindly; everything else passes through unchanged.

Options:
  --config FILE       the gateway's configuration (JSON; schema: settle-mcp.schema.json)
  --settle-url URL    Settle's address (default: SETTLE_URL, then the config's settle_url)
  --key KEY           a runtime ingest key, stl_rk_… (default: SETTLE_KEY)
  --dry-run           record everything, block nothing
  --listen PORT       serve Streamable HTTP on this port
  --host HOST         the address to listen on (default 127.0.0.1)
  --upstream URL      the MCP server's Streamable HTTP endpoint
  --print-schema      print the configuration's JSON schema and exit
  -h, --help          this text`;

export function parseArgs(argv: string[]): Args {
  const out: Args = { dryRun: false, help: false, printSchema: false };
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  if (dash !== -1) {
    const [command, ...args] = argv.slice(dash + 1);
    if (!command) throw new UsageError("-- must be followed by the server's command");
    out.command = { command, args };
  }
  let host = "127.0.0.1";
  let port: number | undefined;
  for (let i = 0; i < own.length; i += 1) {
    const flag = own[i]!;
    const value = () => {
      const v = own[(i += 1)];
      if (v === undefined || v.startsWith("--")) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    if (flag === "--config") out.config = value();
    else if (flag === "--settle-url") out.settleUrl = value();
    else if (flag === "--key") out.key = value();
    else if (flag === "--dry-run") out.dryRun = true;
    else if (flag === "--listen") {
      port = Number(value());
      if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError("--listen needs a port number");
    } else if (flag === "--host") host = value();
    else if (flag === "--upstream") out.upstream = value();
    else if (flag === "--print-schema") out.printSchema = true;
    else if (flag === "-h" || flag === "--help") out.help = true;
    else throw new UsageError(`unknown option ${flag}`);
  }
  if (port !== undefined) out.listen = { port, host };
  if (out.help || out.printSchema) return out;
  if (out.listen && out.command) throw new UsageError("--listen serves HTTP; a server command after -- is for stdio: choose one");
  if (out.listen && !out.upstream) throw new UsageError("--listen needs --upstream <url>");
  if (!out.listen && !out.command) throw new UsageError("give the server's command after --, or --listen <port> --upstream <url>");
  if (out.upstream && !/^https?:\/\//.test(out.upstream)) throw new UsageError("--upstream must be an http(s) URL");
  return out;
}
