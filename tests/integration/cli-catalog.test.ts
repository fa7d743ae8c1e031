import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as ownCatalog } from "@/app/api/v1/tool-catalog/route";
import { getDb } from "@/lib/db/client";
import { call, openSettle, type TestContext, runSettleCli } from "./harness";

// `settle catalog set | list | remove` on the database, audited as `cli`, and
// what a runtime key then reads from GET /api/v1/tool-catalog.

const settle = runSettleCli;

describe("settle catalog", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("sets, changes, lists and removes entries; the runtime reads them; every change is audited as cli", async () => {
    expect(await settle(["catalog", "set", t.runtime, "charge_*", "money"])).toMatchObject({
      code: 0,
      stdout: `Added charge_* → money in runtime ${t.runtime}'s tool catalog.\n`,
    });
    expect((await settle(["catalog", "set", t.runtime, "get_order", "read"])).code).toBe(0);
    expect(await settle(["catalog", "set", t.runtime, "charge_*", "destructive"])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("Set charge_* → destructive"),
    });

    const table = await settle(["catalog", "list", "--runtime", t.runtime]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^RUNTIME\s+PATTERN\s+EFFECT CLASS\s+CHANGED$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 3))).toEqual([
      [t.runtime, "get_order", "read"],
      [t.runtime, "charge_*", "destructive"],
    ]);
    const json = JSON.parse((await settle(["catalog", "list", "--json"])).stdout);
    expect(json.map((e: { pattern: string }) => e.pattern)).toEqual(["get_order", "charge_*"]);

    const own = await call(ownCatalog, { key: t.key, path: "/api/v1/tool-catalog" });
    expect(own.body.items).toEqual([
      { pattern: "get_order", effect_class: "read", volatile_args: null, verify: null },
      { pattern: "charge_*", effect_class: "destructive", volatile_args: null, verify: null },
    ]);

    expect(await settle(["catalog", "remove", t.runtime, "charge_*"])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("Removed charge_* (destructive)"),
    });
    // Each command closes the database it opened: read through a fresh handle.
    const actions = await (
      await getDb()
    ).prisma.adminAction.findMany({ where: { targetType: "tool_catalog_entry" }, orderBy: { at: "asc" } });
    expect(actions.map((a) => [a.actor, a.action])).toEqual([
      ["cli", "tool_catalog_entry_added"],
      ["cli", "tool_catalog_entry_added"],
      ["cli", "tool_catalog_entry_changed"],
      ["cli", "tool_catalog_entry_removed"],
    ]);
  });

  it("sets a verifier, a runbook link, steps and a summary with the class; none clears them; bad ones are refused", async () => {
    const set = await settle([
      "catalog",
      "set",
      t.runtime,
      "create_refund",
      "money",
      "--verify",
      "max_tries=3,every_s=90",
      "--runbook-url",
      "https://dash.example.com/refunds?q={{idempotency_key}}",
      "--runbook",
      "Look the refund up by its key.",
      "--summary",
      "refund {{args.amount}}",
    ]);
    expect(set).toMatchObject({ code: 0, stdout: expect.stringContaining("verifier after 30 s, every 90 s, 3 tries") });
    const entry = async () =>
      JSON.parse((await settle(["catalog", "list", "--json"])).stdout).find(
        (e: { pattern: string }) => e.pattern === "create_refund",
      );
    expect(await entry()).toMatchObject({
      verify: { after_s: 30, every_s: 90, max_tries: 3, absent_after_s: 120, lease_s: 30 },
      runbook_url: "https://dash.example.com/refunds?q={{idempotency_key}}",
      runbook: "Look the refund up by its key.",
      summary: "refund {{args.amount}}",
    });
    // Set again without the options: what it had is kept; `none` clears one.
    expect((await settle(["catalog", "set", t.runtime, "create_refund", "money", "--runbook", "none"])).code).toBe(0);
    expect(await entry()).toMatchObject({ verify: { every_s: 90 }, runbook: null, summary: "refund {{args.amount}}" });
    expect((await settle(["catalog", "set", t.runtime, "create_refund", "money", "--verify", "none"])).code).toBe(0);
    expect((await entry()).verify).toBeNull();
    expect((await settle(["catalog", "set", t.runtime, "create_refund", "money", "--verify", "on"])).code).toBe(0);
    expect((await entry()).verify).toEqual({
      after_s: 30,
      every_s: 60,
      max_tries: 5,
      absent_after_s: 120,
      lease_s: 30,
    });

    const badVerify = await settle(["catalog", "set", t.runtime, "x", "read", "--verify", "tries=3"]);
    expect(badVerify).toMatchObject({ code: 1, stdout: "" });
    expect(badVerify.stderr).toMatch(/--verify/);
    const badLink = await settle(["catalog", "set", t.runtime, "x", "read", "--runbook-url", "ftp://x"]);
    expect(badLink.code).toBe(1);
    expect(badLink.stderr).toMatch(/--runbook-url.*http\(s\) URL/);
  });

  it("refuses a bad class, an unknown runtime and a pattern it does not have, with one line and exit 1", async () => {
    const badClass = await settle(["catalog", "set", t.runtime, "x", "write"]);
    expect(badClass).toMatchObject({ code: 1, stdout: "" });
    expect(badClass.stderr).toMatch(/effect class 'write' must be one of money, destructive, send, create, read/);
    const nobody = await settle(["catalog", "set", "rt-nobody", "x", "read"]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/^settle catalog set: NOT_FOUND: No runtime rt-nobody/);
    const missing = await settle(["catalog", "remove", t.runtime, "nope_*"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/has no catalog entry nope_\*/);
    const empty = await settle(["catalog", "list", "--runtime", "rt-nobody"]);
    expect(empty).toMatchObject({ code: 0, stdout: "" });
    expect((await settle(["catalog", "--help"])).stdout).toMatch(/catalog set\s+give a tool name or pattern/);
  });
});
