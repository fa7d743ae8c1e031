import { mkdtempSync, openSync, writeFileSync, fstatSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseArgs } from "../src/args.js";
import { runMain } from "../src/main.js";
import { readSecrets } from "../src/secrets.js";

// The key comes from a file or a descriptor as well as the environment; once
// read, the variables that held a secret are gone from the gateway's own
// environment (so nothing it starts inherits them); --key earns a warning.

const dir = () => mkdtempSync(path.join(tmpdir(), "settle-mcp-secrets-"));
const keyFile = (key: string) => {
  const file = path.join(dir(), "key");
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return file;
};

describe("reading the key", () => {
  it("reads --key-file and SETTLE_KEY_FILE, and deletes every secret variable from the environment", () => {
    const env: Record<string, string | undefined> = { SETTLE_KEY: "stl_rk_env", SETTLE_MCP_TOKEN: "tok", PATH: "/bin" };
    expect(readSecrets(parseArgs(["--key-file", keyFile("stl_rk_file"), "--", "srv"]), env)).toEqual({
      key: "stl_rk_file",
      token: "tok",
      warnings: [],
    });
    expect(env).toEqual({ PATH: "/bin" });
    const env2: Record<string, string | undefined> = { SETTLE_KEY_FILE: keyFile("stl_rk_var") };
    expect(readSecrets(parseArgs(["--", "srv"]), env2).key).toBe("stl_rk_var");
    expect(env2).toEqual({});
  });

  it("reads --key-fd and closes the descriptor", () => {
    const fd = openSync(keyFile("stl_rk_fd"), "r");
    expect(readSecrets(parseArgs(["--key-fd", String(fd), "--", "srv"]), {}).key).toBe("stl_rk_fd");
    expect(() => fstatSync(fd)).toThrow();
  });

  it("still reads SETTLE_KEY, deleting it once read; warns of --key", () => {
    const env: Record<string, string | undefined> = { SETTLE_KEY: "stl_rk_env" };
    expect(readSecrets(parseArgs(["--", "srv"]), env).key).toBe("stl_rk_env");
    expect(env.SETTLE_KEY).toBeUndefined();
    expect(readSecrets(parseArgs(["--key", "stl_rk_argv", "--", "srv"]), {}).warnings.join()).toMatch(/process list/);
  });

  it("refuses an empty key file and two ways at once", () => {
    expect(() => readSecrets(parseArgs(["--key-file", keyFile(""), "--", "srv"]), {})).toThrow(/secret alone/);
    expect(() => parseArgs(["--key", "a", "--key-file", "b", "--", "srv"])).toThrow(/one way/);
  });
});

async function run(argv: string[], env: Record<string, string>) {
  const stderr = new PassThrough();
  let said = "";
  stderr.on("data", (d) => (said += String(d)));
  const code = await runMain(argv, {
    env: { XDG_STATE_HOME: dir(), SETTLE_URL: "http://127.0.0.1:9", ...env },
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr,
  });
  return { code, said };
}

describe("the HTTP gateway's exposure", () => {
  it("refuses to listen beyond loopback without SETTLE_MCP_TOKEN, saying why", async () => {
    const { code, said } = await run(
      ["--key-file", keyFile("stl_rk_x"), "--listen", "0", "--host", "0.0.0.0", "--upstream", "http://127.0.0.1:9/mcp"],
      {},
    );
    expect(code).toBe(2);
    expect(said).toMatch(/SETTLE_MCP_TOKEN/);
  });
});
