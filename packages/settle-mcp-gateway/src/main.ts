import { writeFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { parseArgs, usage, UsageError, type Args } from "./args.js";
import { createToolCatalog } from "./catalog.js";
import { ConfigError, configJsonSchema, loadConfig, type GatewayConfig } from "./config.js";
import { startHttpGateway } from "./http-gateway.js";
import { createRegistry } from "./registry.js";
import { createSettleCatalog, type SettleCatalog } from "./settle-catalog.js";
import { createSettleLink } from "./settle-link.js";
import { ExposureError, isLoopback } from "./http-access.js";
import { readSecrets, SECRET_VARIABLES } from "./secrets.js";
import { defaultSpoolDir, openSpool, SpoolError, type Spool } from "./spool.js";
import { startStdioGateway } from "./stdio-gateway.js";
import type { CallLog, GatewayDeps } from "./tool-call.js";

// `settle-mcp`: reads the command line, the configuration and the
// environment, then runs the stdio or the Streamable HTTP gateway until its
// client goes away (stdio) or it is stopped (SIGINT/SIGTERM). Its own output
// goes to stderr (on stdio, stdout belongs to the MCP client), except what
// --help and --print-schema were asked for, which exit at once.

export type MainIo = { env: Record<string, string | undefined>; stdin: Readable; stdout: Writable; stderr: Writable };

/** The server's environment: the gateway's, without any secret of the gateway's (readSecrets deleted them already; this is the second lock). */
function serverEnv(env: Record<string, string | undefined>): Record<string, string> {
  const secret = new Set<string>(SECRET_VARIABLES);
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && !secret.has(e[0])),
  );
}

function settleTarget(
  args: Args,
  config: GatewayConfig,
  env: MainIo["env"],
  key: string | null,
): { url: string; key: string } {
  const url = args.settleUrl ?? env.SETTLE_URL ?? config.settle_url;
  if (!url)
    throw new UsageError("Settle's address is missing: set SETTLE_URL (or --settle-url, or settle_url in the config)");
  if (!key)
    throw new UsageError(
      "a runtime key is missing: --key-file FILE or SETTLE_KEY_FILE (or SETTLE_KEY); create one with `settle keys create <runtime>`",
    );
  return { url: url.replace(/\/+$/, ""), key };
}

export async function runMain(argv: string[], io: MainIo): Promise<number> {
  const say = (line: string) => io.stderr.write(`${line}\n`);
  let args: Args;
  let config: GatewayConfig;
  let target: { url: string; key: string };
  let token: string | null;
  let spool: Spool;
  try {
    args = parseArgs(argv);
    if (args.help) {
      // Asked for, the help is the command's output (`settle-mcp --help | head`); a usage error stays on stderr.
      io.stdout.write(`${usage}\n`);
      return 0;
    }
    if (args.printSchema) {
      io.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
      return 0;
    }
    config = loadConfig(args.config);
    if (args.dryRun) config = { ...config, dry_run: true };
    const secrets = readSecrets(args, io.env);
    for (const warning of secrets.warnings) say(`settle-mcp: warning: ${warning}`);
    token = secrets.token;
    target = settleTarget(args, config, io.env, secrets.key);
    spool = openSpool(config.spool_dir ?? defaultSpoolDir(io.env), (m) => say(`settle-mcp: spool: ${m}`));
  } catch (error) {
    if (error instanceof SpoolError) {
      say(`settle-mcp: ${error.message}`);
      return 2;
    }
    if (error instanceof UsageError || error instanceof ConfigError) {
      say(`settle-mcp: ${error.message}`);
      if (error instanceof UsageError) say(usage);
      return 2;
    }
    throw error;
  }

  const settle = createSettleLink({
    url: target.url,
    key: target.key,
    spool,
    fastTimeoutMs: config.settle_timeout_ms,
    onError: (m) => say(`settle-mcp: ${m}`),
  });
  const consoleBase = (config.console_url ?? target.url).replace(/\/+$/, "");
  let settleCatalog: SettleCatalog | null = null;
  if (config.settle_catalog) {
    settleCatalog = createSettleCatalog({
      url: target.url,
      key: target.key,
      refreshMs: config.settle_catalog_refresh_s * 1000,
      timeoutMs: Math.max(config.settle_timeout_ms, 5000),
      onError: (m) => say(`settle-mcp: ${m}`),
    });
    if (await settleCatalog.refresh())
      say(`settle-mcp: ${settleCatalog.size()} effect classes from Settle's tool catalog`);
  }
  const deps: Omit<GatewayDeps, "annotations"> = {
    config,
    settle,
    ...(settleCatalog ? { settleCatalog: settleCatalog.effectFor } : {}),
    registry: createRegistry(),
    log: (line: CallLog) => say(JSON.stringify({ settle_mcp: "call", at: new Date().toISOString(), ...line })),
    consoleLink: (id) => `${consoleBase}/invocations/${encodeURIComponent(id)}`,
    now: () => new Date(),
  };
  const catalog = createToolCatalog();
  const sayBacklog = () => {
    const { spooled, deadLettered } = settle.backlog();
    if (spooled > 0) say(`settle-mcp: ${spooled} records wait in ${spool.dir} for Settle; the next gateway sends them`);
    if (deadLettered > 0)
      say(`settle-mcp: ${deadLettered} records Settle refused are in ${spool.deadLetterFile}, with the reasons`);
  };

  if (args.listen) {
    let gateway: Awaited<ReturnType<typeof startHttpGateway>>;
    try {
      gateway = await startHttpGateway({
        port: args.listen.port,
        host: args.listen.host,
        upstream: args.upstream!,
        deps,
        catalog,
        access: {
          hosts: [...config.http.allowed_hosts, ...args.allowHosts],
          origins: [...config.http.allowed_origins, ...args.allowOrigins],
          token,
        },
        onRefused: (m) => say(`settle-mcp: ${m}`),
      });
    } catch (error) {
      if (!(error instanceof ExposureError)) throw error;
      say(`settle-mcp: ${error.message}`);
      settle.close();
      settleCatalog?.close();
      return 2;
    }
    say(
      `settle-mcp: listening on http://${args.listen.host}:${gateway.port}/ → ${args.upstream} (Settle: ${target.url}${config.dry_run ? ", dry run" : ""}${token ? ", bearer token required" : ""})`,
    );
    if (!isLoopback(args.listen.host)) {
      say(
        `settle-mcp: warning: listening on ${args.listen.host}, beyond this machine: every request needs the bearer token; it travels in clear over plain HTTP, so put TLS in front`,
      );
    }
    if (io.env.SETTLE_MCP_PORT_FILE) writeFileSync(io.env.SETTLE_MCP_PORT_FILE, String(gateway.port));
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await gateway.close();
    await settle.flush();
    settle.close();
    settleCatalog?.close();
    sayBacklog();
    return 0;
  }

  const { command, args: serverArgs } = args.command!;
  const gateway = startStdioGateway({
    command,
    args: serverArgs,
    env: serverEnv(io.env),
    deps,
    catalog,
    stdin: io.stdin,
    stdout: io.stdout,
    onStderr: (chunk) => io.stderr.write(chunk),
  });
  process.once("SIGTERM", () => void gateway.stop());
  process.once("SIGINT", () => void gateway.stop());
  await gateway.closed;
  settle.close();
  settleCatalog?.close();
  sayBacklog();
  return 0;
}
