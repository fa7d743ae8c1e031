import { parseArgs } from "node:util";
import type { CliIo } from "./io";
import { UsageError } from "./errors";

// Commands are declared as data; node:util's parseArgs does the parsing, so
// this file only adds help, positional counts and typed option values.

export type OptionSpec = { type: "string" | "boolean"; short?: string };
export type OptionValues = Record<string, string | boolean | undefined>;
export type CommandInput = { values: OptionValues; args: string[] };

export type Command = {
  /** As typed: "keys create". */
  name: string;
  summary: string;
  /** The whole --help text, starting with its usage line. */
  help: string;
  options: Record<string, OptionSpec>;
  args: { min: number; max: number };
  run: (input: CommandInput, io: CliIo) => Promise<number>;
};

const commonOptions: Record<string, OptionSpec> = {
  help: { type: "boolean", short: "h" },
  debug: { type: "boolean" },
};

/** node:util's messages run to several sentences of advice; the first says what is wrong. */
function parseProblem(message: string): string {
  const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(message);
  if (ambiguous)
    return `${ambiguous[1]} needs a value; to give one that starts with '-', write ${ambiguous[1]}=<value>`;
  return message.split(/\.(?:\s|$)/)[0]!;
}

export function parseCommandLine(command: Command, argv: string[]): CommandInput {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...commonOptions, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(parseProblem(error instanceof Error ? error.message : String(error)));
  }
  const values = parsed.values as OptionValues;
  if (values.help) return { values, args: parsed.positionals };
  const count = parsed.positionals.length;
  if (count < command.args.min) {
    const names =
      usageLine(command)
        .split(/\s\[|\s--/)[0]!
        .match(/<[^>]+>/g) ?? [];
    throw new UsageError(`missing ${names[count] ?? "argument"}`);
  }
  if (count > command.args.max) throw new UsageError(`unexpected argument '${parsed.positionals[command.args.max]}'`);
  return { values, args: parsed.positionals };
}

export function usageLine(command: Command): string {
  return command.help.split("\n")[0]!.replace(/^Usage:\s*/, "");
}

export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

export function requiredString(values: OptionValues, name: string): string {
  const value = stringOption(values, name);
  if (value === undefined || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function integerOption(
  values: OptionValues,
  name: string,
  range: { min: number; max: number; fallback: number },
): number {
  const raw = stringOption(values, name);
  if (raw === undefined) return range.fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new UsageError(`--${name} must be a whole number from ${range.min} to ${range.max}, not '${raw}'`);
  }
  return n;
}
