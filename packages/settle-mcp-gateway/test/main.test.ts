import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runMain } from "../src/main.js";

// `settle-mcp --help | head` reads the help: it goes to stdout and exits 0. A usage error still goes to stderr
// (on stdio, stdout belongs to the MCP client).
async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) => {
    const s = new PassThrough();
    s.on("data", (c) => into.push(String(c)));
    return s;
  };
  const code = await runMain(argv, { env: {}, stdin: new PassThrough(), stdout: sink(out), stderr: sink(err) });
  return { code, out: out.join(""), err: err.join("") };
}

describe("settle-mcp's help", () => {
  it("--help prints the usage to stdout and exits 0", async () => {
    const help = await run(["--help"]);
    expect(help).toMatchObject({ code: 0, err: "" });
    expect(help.out).toMatch(/settle-mcp/);
  });

  it("a usage error prints to stderr and exits 2", async () => {
    const bad = await run(["--no-such-flag"]);
    expect(bad.code).toBe(2);
    expect(bad.out).toBe("");
    expect(bad.err).toMatch(/settle-mcp/);
  });
});
