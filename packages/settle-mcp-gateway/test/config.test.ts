import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseArgs, UsageError } from "../src/args.js";
import { ConfigError, configJsonSchema, parseConfig } from "../src/config.js";

// The configuration file and the command line: defaults that work with no
// file at all, errors that name the field, and the JSON schema shipped for
// editors generated from the same zod schema the gateway parses with.

describe("the configuration", () => {
  it("works empty, with every default", () => {
    const config = parseConfig({}, "empty");
    expect(config).toMatchObject({
      tools: [],
      default_effect: "unclassified",
      approval_wait_s: 20,
      call_timeout_s: 120,
      forward_key: true,
      dry_run: false,
    });
    expect(config.task).toEqual({
      sources: ["meta", "header", "session"],
      meta_key: "settle.dev/task_id",
      header: "settle-task-id",
    });
  });

  it("names the field that is wrong, and refuses a misspelt one", () => {
    expect(() => parseConfig({ tools: [{ match: "x", effect: "money-ish" }] }, "gw.json")).toThrow(ConfigError);
    expect(() => parseConfig({ tools: [{ match: "x", effect: "money-ish" }] }, "gw.json")).toThrow(
      /^gw\.json: tools\.0\.effect/,
    );
    expect(() => parseConfig({ aproval_wait_s: 3 }, "gw.json")).toThrow(/aproval_wait_s/);
  });

  it("ships settle-mcp.schema.json exactly as the zod schema generates it", () => {
    const shipped = JSON.parse(readFileSync(new URL("../settle-mcp.schema.json", import.meta.url), "utf8"));
    expect(shipped).toEqual(configJsonSchema());
  });
});

describe("the command line", () => {
  it("reads stdio: options before --, the server's command after it, untouched", () => {
    expect(
      parseArgs(["--config", "gw.json", "--dry-run", "--", "npx", "-y", "@acme/mcp", "--port", "1"]),
    ).toMatchObject({
      config: "gw.json",
      dryRun: true,
      command: { command: "npx", args: ["-y", "@acme/mcp", "--port", "1"] },
    });
  });

  it("reads Streamable HTTP", () => {
    expect(
      parseArgs([
        "--listen",
        "7070",
        "--upstream",
        "http://127.0.0.1:9000/mcp",
        "--settle-url",
        "http://s",
        "--key",
        "k",
      ]),
    ).toMatchObject({
      listen: { port: 7070, host: "127.0.0.1" },
      upstream: "http://127.0.0.1:9000/mcp",
      settleUrl: "http://s",
      key: "k",
    });
  });

  it.each([
    [[], /give the server's command/],
    [["--listen", "1"], /--upstream/],
    [["--listen", "x", "--upstream", "http://u"], /port number/],
    [["--listen", "1", "--upstream", "http://u", "--", "node", "s.js"], /choose one/],
    [["--bogus"], /unknown option --bogus/],
    [["--"], /must be followed/],
  ])("refuses %j", (argv, message) => {
    expect(() => parseArgs(argv as string[])).toThrow(UsageError);
    expect(() => parseArgs(argv as string[])).toThrow(message);
  });
});
