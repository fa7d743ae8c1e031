import { describe, expect, it } from "vitest";
import { integerOption, parseCommandLine, type Command } from "./args";
import { UsageError } from "./errors";
import { runCli } from "./main";

const command: Command = {
  name: "demo",
  summary: "a demo",
  help: "Usage: settle demo <file> <target> [--count <n>]\n\nMore.",
  options: { count: { type: "string" }, dry: { type: "boolean" } },
  args: { min: 2, max: 2 },
  run: async () => 0,
};

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a UsageError");
}

async function run(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(argv, { stdout: { write: (s) => (stdout += s) }, stderr: { write: (s) => (stderr += s) } });
  return { code, stdout, stderr };
}

describe("parseCommandLine", () => {
  it("returns options and positionals", () => {
    expect(parseCommandLine(command, ["a.jsonl", "b", "--count", "3", "--dry"])).toEqual({
      values: { count: "3", dry: true },
      args: ["a.jsonl", "b"],
    });
  });

  it("names the missing positional from the usage line", () => {
    expect(usageError(() => parseCommandLine(command, []))).toBe("missing <file>");
    expect(usageError(() => parseCommandLine(command, ["a"]))).toBe("missing <target>");
  });

  it("refuses extra positionals, unknown options and a value that looks like an option", () => {
    expect(usageError(() => parseCommandLine(command, ["a", "b", "c"]))).toBe("unexpected argument 'c'");
    expect(usageError(() => parseCommandLine(command, ["a", "b", "--nope"]))).toBe("Unknown option '--nope'");
    expect(usageError(() => parseCommandLine(command, ["a", "b", "--count", "-1"]))).toBe(
      "--count needs a value; to give one that starts with '-', write --count=<value>",
    );
  });

  it("lets --help through whatever else is missing", () => {
    expect(parseCommandLine(command, ["--help"]).values.help).toBe(true);
  });
});

describe("integerOption", () => {
  const range = { min: 1, max: 500, fallback: 500 };
  it("reads whole numbers in range and falls back when absent", () => {
    expect(integerOption({}, "batch", range)).toBe(500);
    expect(integerOption({ batch: "42" }, "batch", range)).toBe(42);
  });
  it.each(["0", "501", "1.5", "ten", "", "1e2"])("refuses %j", (raw) => {
    expect(usageError(() => integerOption({ batch: raw }, "batch", range))).toMatch(
      /^--batch must be a whole number from 1 to 500/,
    );
  });
});

describe("runCli without a database", () => {
  it("prints the command list for --help (exit 0) and on stderr with no command (exit 1)", async () => {
    const help = await run(["--help"]);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: settle <command> \[options\]/);
    const none = await run([]);
    expect(none).toMatchObject({ code: 1, stdout: "" });
    expect(none.stderr).toContain("Commands:");
  });

  it("prints each command's help, starting with its usage line", async () => {
    for (const argv of [
      ["keys", "create"],
      ["keys", "list"],
      ["keys", "revoke"],
      ["migrate"],
      ["ingest"],
      ["simulate"],
    ]) {
      const help = await run([...argv, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout.startsWith(`Usage: settle ${argv.join(" ")}`)).toBe(true);
      expect(help.stdout).toContain("Example:");
    }
  });

  it("answers an unknown command with one line", async () => {
    expect(await run(["keys", "rotate"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "settle keys: unknown command 'keys rotate' (see: settle keys --help)\n",
    });
    expect(await run(["deploy"])).toEqual({
      code: 1,
      stdout: "",
      stderr: "settle: unknown command 'deploy' (see: settle --help)\n",
    });
  });
});
