// The command line: `settle-mcp [options] -- <server command> [args…]` for
// stdio, `settle-mcp [options] --listen <port> --upstream <url>` for
// Streamable HTTP.

export type Args = {
  config?: string;
  settleUrl?: string;
  key?: string;
  keyFile?: string;
  keyFd?: number;
  allowHosts: string[];
  allowOrigins: string[];
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
  --key-file FILE     read the runtime ingest key (stl_rk_…) from FILE (default: SETTLE_KEY_FILE, then SETTLE_KEY)
  --key-fd N          read the key from file descriptor N (e.g. 3 with 3<key.txt), then close it
  --key KEY           the key itself: visible to every user in the process list; prefer --key-file
  --dry-run           record everything, block nothing
  --listen PORT       serve Streamable HTTP on this port
  --host HOST         the address to listen on (default 127.0.0.1; any other needs SETTLE_MCP_TOKEN)
  --allow-host HOST   also answer to this Host (host or host:port); repeatable
  --allow-origin URL  let browser pages of this origin call it (scheme://host:port); repeatable
  --upstream URL      the MCP server's Streamable HTTP endpoint
  --print-schema      print the configuration's JSON schema and exit
  -h, --help          this text`;

export function parseArgs(argv: string[]): Args {
  const out: Args = { dryRun: false, help: false, printSchema: false, allowHosts: [], allowOrigins: [] };
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
    else if (flag === "--key-file") out.keyFile = value();
    else if (flag === "--key-fd") {
      out.keyFd = Number(value());
      if (!Number.isInteger(out.keyFd) || out.keyFd < 3)
        throw new UsageError("--key-fd needs a file descriptor number of 3 or more");
    } else if (flag === "--allow-host") out.allowHosts.push(value());
    else if (flag === "--allow-origin") out.allowOrigins.push(value());
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
  if (out.listen && out.command)
    throw new UsageError("--listen serves HTTP; a server command after -- is for stdio: choose one");
  if (out.listen && !out.upstream) throw new UsageError("--listen needs --upstream <url>");
  if (!out.listen && !out.command)
    throw new UsageError("give the server's command after --, or --listen <port> --upstream <url>");
  if ([out.key, out.keyFile, out.keyFd].filter((k) => k !== undefined).length > 1)
    throw new UsageError("give the key one way: --key-file, --key-fd or --key");
  if (out.upstream && !/^https?:\/\//.test(out.upstream)) throw new UsageError("--upstream must be an http(s) URL");
  return out;
}
