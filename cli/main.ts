import { MigrationsPendingError } from "@/lib/db/client";
import { DataDirInUseError } from "@/lib/db/data-dir-lock";
import { isDatabaseUnavailable } from "@/lib/db/errors";
import { MigrationError } from "@/lib/db/migrate";
import { parseCommandLine, type Command } from "./args";
import { archiveList, archiveRestore } from "./commands/archive";
import { auditVerify } from "./commands/audit";
import { catalogList, catalogRemove, catalogSet } from "./commands/catalog";
import { evidenceExport, evidenceKey, evidenceVerify } from "./commands/evidence";
import { ingest } from "./commands/ingest";
import { keysCreate } from "./commands/keys-create";
import { keysList } from "./commands/keys-list";
import { keysRevoke } from "./commands/keys-revoke";
import { migrate } from "./commands/migrate";
import { exportCommand, importCommand } from "./commands/dump";
import { notificationsAdd, notificationsList, notificationsRemove } from "./commands/notifications";
import { retentionReset, retentionRun, retentionSet, retentionShow } from "./commands/retention";
import { simulate } from "./commands/simulate";
import { tokensCreate } from "./commands/tokens-create";
import { usersCreate } from "./commands/users-create";
import { usersResetPassword } from "./commands/users-reset-password";
import { CliError, EXIT_FAILED, EXIT_UNREACHABLE, UsageError } from "./errors";
import { printLine, type CliIo } from "./io";

// `settle <command>`: finds the command, parses its options, runs it, and
// turns every expected failure into one line on stderr and an exit code.

const commands: Command[] = [
  keysCreate,
  keysList,
  keysRevoke,
  usersCreate,
  usersResetPassword,
  tokensCreate,
  catalogList,
  catalogSet,
  catalogRemove,
  notificationsList,
  notificationsAdd,
  notificationsRemove,
  retentionShow,
  retentionSet,
  retentionReset,
  retentionRun,
  archiveList,
  archiveRestore,
  auditVerify,
  evidenceKey,
  evidenceExport,
  evidenceVerify,
  migrate,
  exportCommand,
  importCommand,
  ingest,
  simulate,
];
/** Every command's name ("keys create", "migrate"), in the order help lists them. */
export const commandNames = (): string[] => commands.map((c) => c.name);

const groups = ["keys", "users", "tokens", "catalog", "notifications", "retention", "archive", "audit", "evidence"];

/** Commands one per line, their summaries in one column past the longest name. */
function commandList(list: typeof commands): string {
  const width = Math.max(...list.map((c) => c.name.length)) + 2;
  return list.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join("\n");
}

const mainHelp = `Usage: settle <command> [options]

The command line of Settle, the console for AI-agent tool actions whose outcome
is uncertain. Database commands use DATABASE_URL, or the embedded database in
SETTLE_DATA_DIR (default ./.settle/data) when it is not set.

Commands:
${commandList(commands)}

Run 'settle <command> --help' for a command's options and an example.
Add --debug to any command to see the stack of an unexpected error.

Exit codes: 0 done; 1 bad input, rejected records or a failed check;
2 the server or database could not be reached, or refused the key.`;

function groupHelp(group: string): string {
  const members = commands.filter((c) => c.name.startsWith(`${group} `));
  return `Usage: settle ${group} <command> [options]

Commands:
${commandList(members)}

Run 'settle ${group} <command> --help' for its options and an example.`;
}

// PostgreSQL refusing the database or the credentials is as fatal as not reaching it.
const unusableDatabaseCodes = new Set(["3D000", "28P01", "28000"]);

function isDatabaseUnusable(error: unknown): boolean {
  const code =
    (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code ??
    (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return isDatabaseUnavailable(error) || (typeof code === "string" && unusableDatabaseCodes.has(code));
}

const oneLine = (message: string) =>
  message
    .replace(/:\s*\n\s*/g, ": ")
    .replace(/\s*\n\s*/g, "; ")
    .trim();

function reportError(error: unknown, command: string | null, io: CliIo, debug: boolean): number {
  const prefix = `settle${command ? ` ${command}` : ""}:`;
  const message = oneLine(error instanceof Error ? error.message : String(error));
  if (error instanceof UsageError) {
    printLine(io.stderr, `${prefix} ${message} (see: settle ${command ?? ""}${command ? " " : ""}--help)`);
    return EXIT_FAILED;
  }
  if (error instanceof CliError) {
    printLine(io.stderr, `${prefix} ${message}`);
    return error.exitCode;
  }
  // lib/env.ts reports bad settings with a plain Error; the message already says what to fix.
  const badSettings = error instanceof Error && error.message.startsWith("Settle's settings are invalid");
  if (error instanceof MigrationsPendingError || error instanceof MigrationError || badSettings) {
    printLine(io.stderr, `${prefix} ${message}`);
    return EXIT_FAILED;
  }
  if (error instanceof DataDirInUseError) {
    printLine(io.stderr, `${prefix} ${message}`);
    return EXIT_UNREACHABLE;
  }
  if (isDatabaseUnusable(error)) {
    printLine(io.stderr, `${prefix} cannot use the database: ${message}`);
    if (debug && error instanceof Error) printLine(io.stderr, error.stack);
    return EXIT_UNREACHABLE;
  }
  printLine(io.stderr, `${prefix} ${message}${debug ? "" : " (run again with --debug for details)"}`);
  if (debug && error instanceof Error) printLine(io.stderr, error.stack);
  return EXIT_FAILED;
}

function findCommand(argv: string[]): { command: Command | null; rest: string[]; group: string | null } {
  const [first, second] = argv;
  if (first && groups.includes(first)) {
    const command = commands.find((c) => c.name === `${first} ${second}`) ?? null;
    return { command, rest: argv.slice(command ? 2 : 1), group: first };
  }
  return { command: commands.find((c) => c.name === first) ?? null, rest: argv.slice(1), group: null };
}

/** Runs one command line; returns the exit code. Never throws, never exits the process. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const debug = argv.includes("--debug");
  const first = argv[0];
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    printLine(first === undefined ? io.stderr : io.stdout, mainHelp);
    return first === undefined ? EXIT_FAILED : 0;
  }
  const { command, rest, group } = findCommand(argv);
  if (!command) {
    if (group) {
      const asked = rest[0];
      const wantsHelp = asked === undefined || asked === "--help" || asked === "-h";
      if (!wantsHelp) return reportError(new UsageError(`unknown command '${group} ${asked}'`), group, io, debug);
      printLine(asked === undefined ? io.stderr : io.stdout, groupHelp(group));
      return asked === undefined ? EXIT_FAILED : 0;
    }
    return reportError(new UsageError(`unknown command '${first}'`), null, io, debug);
  }
  try {
    const input = parseCommandLine(command, rest);
    if (input.values.help) {
      printLine(io.stdout, command.help);
      return 0;
    }
    return await command.run(input, io);
  } catch (error) {
    return reportError(error, command.name, io, debug);
  }
}
