import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokenLinks, runnableSections } from "./readme-blocks";
import { startSettle, type SettleUnderTest } from "./mcp-gateway-support";

// The README as a newcomer uses it, from this checkout (CI: a fresh clone
// after `npm ci`): short enough to read, every link resolves, and every
// quick start runs as written, one after the other, against a running Settle
// — the clients packed and installed into a project outside the repository,
// the Python client pip-installed into a new virtual environment, the MCP
// gateway demo, and the OTLP curl. Only the address of Settle is replaced, by
// the test server's; the reader's folder ($QUICKSTART_DIR) is a temporary one.

const root = process.cwd();
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const sections = runnableSections(readme);

describe("the README", () => {
  it("is at most 250 lines, and every relative link in it, in docs/ and in the packages' and examples' pages resolves", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
    const markdownIn = (dir: string) =>
      readdirSync(path.join(root, dir))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `${dir}/${f}`);
    const pages = [
      "README.md",
      ...markdownIn("docs"),
      ...markdownIn("docs/decisions"),
      ...[
        "settle-client",
        "settle-mcp-gateway",
        "settle-py",
        "settle-ai-sdk",
        "settle-langchain",
        "settle-openai-agents",
        "settle-claude-code",
      ].map((p) => `packages/${p}/README.md`),
      ...["agent-runtime", "mcp-shop", "frameworks"].flatMap((e) => markdownIn(`examples/${e}`)),
    ];
    const broken = pages.flatMap((p) => brokenLinks(path.join(root, p)).map((l) => `${p}: ${l}`));
    expect(broken).toEqual([]);
    // Two people (or a CI job) following it on one host: no fixed folder, and the OTLP span sent now, not in 2025.
    expect(sections.flatMap((s) => s.script).filter((line) => line.includes("/tmp/"))).toEqual([]);
    expect(readme).not.toMatch(/UnixNano": "\d{19}"/);
    expect(sections.map((s) => s.title)).toEqual([
      "TypeScript",
      "Python",
      "MCP gateway",
      "Agent frameworks",
      "OpenTelemetry",
    ]);
  });

  it("numbers each decision record once, and its title, when it carries a number, carries the file's", () => {
    const records = readdirSync(path.join(root, "docs/decisions")).filter((f) => /^\d{3}-.*\.md$/.test(f));
    const numbers = records.map((f) => f.slice(0, 3));
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i)).toEqual([]);
    const titles = records.flatMap((f) => {
      const number = readFileSync(path.join(root, "docs/decisions", f), "utf8").match(/^# (\d{3}) /)?.[1];
      return number && number !== f.slice(0, 3) ? [`${f}: # ${number}`] : [];
    });
    expect(titles).toEqual([]);
  });
});

describe("the README's quick starts, run one after the other", () => {
  let settle: SettleUnderTest;
  let scratch: string;
  let databaseUrl: string;
  beforeAll(async () => {
    settle = await startSettle("postgres");
    databaseUrl = (await import("@/lib/env")).env().DATABASE_URL!;
    scratch = mkdtempSync(path.join(tmpdir(), "settle-readme-"));
  });
  afterAll(async () => {
    await settle?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  async function run(title: string): Promise<string> {
    const section = sections.find((s) => s.title === title)!;
    const script = ["set -euo pipefail", ...section.script].join("\n").replaceAll("http://localhost:3000", settle.url);
    // Not spawnSync: the Settle under test answers from this process's event loop.
    const child = spawn("bash", ["-c", script], {
      cwd: root,
      timeout: 240_000,
      env: {
        ...process.env,
        // The CLI (`keys create`) works on the database the test server uses.
        DATABASE_URL: databaseUrl,
        SETTLE_URL: settle.url,
        SETTLE_KEY: "",
        QUICKSTART_DIR: scratch,
        npm_config_prefer_offline: "true",
        npm_config_audit: "false",
        npm_config_fund: "false",
        npm_config_update_notifier: "false",
      },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const status = await new Promise<number | null>((resolve) => child.once("close", resolve));
    if (status !== 0) throw new Error(`${title} exited ${status}:\n${stdout}\n${stderr}`);
    return stdout;
  }

  it("TypeScript: the packed clients install outside the repository; the quick start runs with plain node, and npx settle-mcp --help works", async () => {
    const out = await run("TypeScript");
    expect(out).toMatch(/^done \{ id: 'o-1', cart: 'cart-1' \} calls: 1$/m);
    expect(out).toMatch(/^done calls: 0$/m);
    expect(out).toMatch(/settle-mcp/);
    const installed = readdirSync(path.join(scratch, "my-agent/node_modules/@settle"));
    expect(installed.sort()).toEqual(["client", "mcp-gateway"]);
  }, 300_000);

  it("Python: pip installs the client into a new virtual environment, the quick start runs, and pip wheel builds a wheel", async () => {
    const out = await run("Python");
    expect(out).toContain("{'id': 'o-1', 'cart': 'cart-1'}");
    expect(out).toContain("DuplicateRefused committed none");
    expect(readdirSync(path.join(scratch, "wheels"))).toEqual(["settle_client-0.1.0-py3-none-any.whl"]);
  }, 180_000);

  it("MCP gateway: npm run example:mcp ends with the probe settling the broken call", async () => {
    const out = await run("MCP gateway");
    expect(out).toContain("OUTCOME_UNKNOWN: commit state unknown");
    expect(out).toContain("ALREADY_COMMITTED");
    expect(out).toMatch(/Settle: reconciled, commit state committed, decision do_not_retry/);
    expect(out).toMatch(/The shop has 1 order for/);
  }, 180_000);

  it("Agent frameworks: the four packages install outside the repository, and example:frameworks leaves one refund per framework", async () => {
    const out = await run("Agent frameworks");
    expect(out).toMatch(/^ai-sdk settleApprovals settleClientOf withSettle$/m);
    expect(out).toMatch(/^langchain readToolMessage settleMiddleware$/m);
    expect(out).toMatch(/^openai-agents settleInterruptions withSettle$/m);
    expect(out).toMatch(/^claude-code createHookHandlers fileStore memoryStore readOnlyTools settleHooks$/m);
    for (const framework of ["ai-sdk", "langchain", "openai-agents", "claude-code"]) {
      expect(out).toMatch(new RegExp(`^${framework}: the agent's process was killed after the provider applied`, "m"));
      expect(out).toMatch(new RegExp(`^  ${framework}: 1 refund of pay_${framework}_\\w+ at the provider$`, "m"));
    }
    expect(out).toMatch(
      /past the call's budget, the agent's probe finds the refund → Not run: an identical create_refund call \d+ s ago already took effect\./,
    );
    expect(out).toContain(
      'Each framework: exactly one refund. {"ai-sdk":1,"langchain":1,"openai-agents":1,"claude-code":1}',
    );
  }, 300_000);

  it("OpenTelemetry: the curl body is accepted as pasted, and the span is an unknown create_invoice", async () => {
    const out = await run("OpenTelemetry");
    expect(JSON.parse(out)).toEqual({});
    const [row] = await settle.ctx.db.driver.query<{ tool: string; status: string }>(
      "SELECT tool, status FROM invocations WHERE invocation_id = $1",
      ["call_quickstart_1"],
    );
    expect(row).toEqual({ tool: "create_invoice", status: "outcome_unknown" });
  }, 60_000);
});
