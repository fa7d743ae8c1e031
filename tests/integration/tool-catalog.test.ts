import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as entryRoute from "@/app/api/v1/admin/tool-catalog/[entry_id]/route";
import * as catalogRoute from "@/app/api/v1/admin/tool-catalog/route";
import * as ownCatalogRoute from "@/app/api/v1/tool-catalog/route";
import { CATALOG_LIMIT } from "@/lib/catalog/catalog";
import { effectClassFor } from "@/lib/catalog/effect-class";
import { loadToolCatalog } from "@/lib/catalog/load";
import { inSettingsScope, readSettingsVersion } from "@/lib/db/settings-version";
import { createRuntimeKey } from "@/lib/identity/runtime-keys";
import { call, createOperator, openSettle, type Backend, type TestContext } from "./harness";

// The tool catalog over the API: admins add, change and remove entries, each
// audited with its state before and after; nobody else may; a runtime key
// reads its own runtime's catalog and no other's.

const path = "/api/v1/admin/tool-catalog";
const noText = { summary: null, runbook_url: null, runbook: null };

describe.each<Backend>(["postgres", "pglite"])("tool catalog on %s", (backend) => {
  let t: TestContext;
  let admin: string;
  let operator: string;
  let viewer: string;
  let otherKey: string;
  beforeAll(async () => {
    t = await openSettle(backend);
    admin = (await createOperator(t.db, "admin", "admin@example.com")).token;
    operator = (await createOperator(t.db, "operator")).token;
    viewer = (await createOperator(t.db, "viewer")).token;
    otherKey = (await createRuntimeKey(t.db, "rt-other")).key;
  });
  afterAll(async () => {
    await t?.teardown();
  });

  const add = (key: string, body: unknown) => call(catalogRoute.POST, { key, path, body });
  const audit = (targetId: string) => t.db.prisma.adminAction.findMany({ where: { targetId }, orderBy: { at: "asc" } });

  it("an admin adds, lists, changes and removes entries; each change is audited with before and after", async () => {
    const created = await add(admin, { runtime: t.runtime, pattern: " charge_* ", effect_class: "money" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ runtime: t.runtime, pattern: "charge_*", effect_class: "money" });
    const id = created.body.id as string;
    await add(admin, { runtime: t.runtime, pattern: "charge_preview", effect_class: "read" });
    await add(admin, { runtime: "rt-other", pattern: "charge_*", effect_class: "send" });

    const mine = await call(catalogRoute.GET, { key: admin, path: `${path}?runtime=${t.runtime}` });
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((e: { pattern: string }) => e.pattern)).toEqual(["charge_preview", "charge_*"]);
    const all = await call(catalogRoute.GET, { key: admin, path });
    expect(all.body.items.map((e: { runtime: string }) => e.runtime)).toEqual(["rt-other", t.runtime, t.runtime]);

    const changed = await call(entryRoute.PATCH, {
      method: "PATCH",
      key: admin,
      params: { entry_id: id },
      body: { effect_class: "destructive" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id, pattern: "charge_*", effect_class: "destructive" });
    const read = await call(entryRoute.GET, { key: admin, params: { entry_id: id } });
    expect(read.body).toMatchObject({ effect_class: "destructive" });

    const removed = await call(entryRoute.DELETE, { method: "DELETE", key: admin, params: { entry_id: id } });
    expect(removed).toMatchObject({ status: 200, body: { deleted: true } });
    expect((await call(entryRoute.GET, { key: admin, params: { entry_id: id } })).status).toBe(404);
    expect((await call(entryRoute.DELETE, { method: "DELETE", key: admin, params: { entry_id: id } })).body.code).toBe(
      "NOT_FOUND",
    );

    const trail = await audit(id);
    expect(trail.map((a) => [a.action, a.actor, a.targetType])).toEqual([
      ["tool_catalog_entry_added", "admin@example.com", "tool_catalog_entry"],
      ["tool_catalog_entry_changed", "admin@example.com", "tool_catalog_entry"],
      ["tool_catalog_entry_removed", "admin@example.com", "tool_catalog_entry"],
    ]);
    expect(trail.map((a) => [a.before, a.after])).toEqual([
      [
        null,
        {
          runtime: t.runtime,
          pattern: "charge_*",
          effect_class: "money",
          volatile_args: null,
          verify: null,
          ...noText,
        },
      ],
      [
        {
          runtime: t.runtime,
          pattern: "charge_*",
          effect_class: "money",
          volatile_args: null,
          verify: null,
          ...noText,
        },
        {
          runtime: t.runtime,
          pattern: "charge_*",
          effect_class: "destructive",
          volatile_args: null,
          verify: null,
          ...noText,
        },
      ],
      [
        {
          runtime: t.runtime,
          pattern: "charge_*",
          effect_class: "destructive",
          volatile_args: null,
          verify: null,
          ...noText,
        },
        null,
      ],
    ]);
  });

  it("refuses a duplicate pattern (also by renaming onto one) with CATALOG_ENTRY_EXISTS, and bad input with INVALID_REQUEST", async () => {
    const first = await add(admin, { runtime: t.runtime, pattern: "send_*", effect_class: "send" });
    const dup = await add(admin, { runtime: t.runtime, pattern: "send_*", effect_class: "create" });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({
      ok: false,
      code: "CATALOG_ENTRY_EXISTS",
      safe_details: { field: "pattern", entry_id: first.body.id },
    });
    const other = await add(admin, { runtime: t.runtime, pattern: "notify_*", effect_class: "send" });
    const rename = await call(entryRoute.PATCH, {
      method: "PATCH",
      key: admin,
      params: { entry_id: other.body.id },
      body: { pattern: "send_*" },
    });
    expect(rename.body.code).toBe("CATALOG_ENTRY_EXISTS");

    for (const body of [
      { runtime: t.runtime, pattern: "", effect_class: "read" },
      { runtime: t.runtime, pattern: "x".repeat(201), effect_class: "read" },
      { runtime: t.runtime, pattern: "a\u0007b", effect_class: "read" },
      { runtime: t.runtime, pattern: "x", effect_class: "write" },
      { runtime: t.runtime, pattern: "x" },
    ]) {
      expect((await add(admin, body)).body.code).toBe("INVALID_REQUEST");
    }
    expect((await add(admin, { runtime: t.runtime, pattern: "x".repeat(200), effect_class: "read" })).status).toBe(201);
    expect((await add(admin, { runtime: "rt-nobody", pattern: "x", effect_class: "read" })).body.code).toBe(
      "NOT_FOUND",
    );
    const empty = await call(entryRoute.PATCH, {
      method: "PATCH",
      key: admin,
      params: { entry_id: other.body.id },
      body: {},
    });
    expect(empty.body.code).toBe("INVALID_REQUEST");
    expect(
      (
        await call(entryRoute.PATCH, {
          method: "PATCH",
          key: admin,
          params: { entry_id: "not-a-uuid" },
          body: { effect_class: "read" },
        })
      ).body.code,
    ).toBe("NOT_FOUND");
  });

  it("refuses operators, viewers and runtime keys", async () => {
    for (const key of [operator, viewer, t.key]) {
      const res = await add(key, { runtime: t.runtime, pattern: "nope_*", effect_class: "read" });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("FORBIDDEN");
      expect((await call(catalogRoute.GET, { key, path })).status).toBe(403);
    }
    expect(await t.db.prisma.toolCatalogEntry.count({ where: { pattern: "nope_*" } })).toBe(0);
  });

  it("a runtime key reads its own runtime's catalog, most specific first, and no other's; a person may not", async () => {
    const own = await call(ownCatalogRoute.GET, { key: t.key, path: "/api/v1/tool-catalog" });
    expect(own.status).toBe(200);
    expect(own.body.runtime).toBe(t.runtime);
    expect(own.body.items).toEqual([
      { pattern: "x".repeat(200), effect_class: "read", volatile_args: null, verify: null },
      { pattern: "charge_preview", effect_class: "read", volatile_args: null, verify: null },
      { pattern: "notify_*", effect_class: "send", volatile_args: null, verify: null },
      { pattern: "send_*", effect_class: "send", volatile_args: null, verify: null },
    ]);
    const other = await call(ownCatalogRoute.GET, { key: otherKey, path: "/api/v1/tool-catalog" });
    expect(other.body).toEqual({
      runtime: "rt-other",
      items: [{ pattern: "charge_*", effect_class: "send", volatile_args: null, verify: null }],
    });
    expect((await call(ownCatalogRoute.GET, { key: admin, path: "/api/v1/tool-catalog" })).status).toBe(403);
  });

  it("volatile_args: set on add, changed and reset to the default by PATCH, audited, validated", async () => {
    const created = await add(admin, {
      runtime: t.runtime,
      pattern: "refund_*",
      effect_class: "money",
      volatile_args: [" memo ", "attempt", "memo"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.volatile_args).toEqual(["memo", "attempt"]);
    const id = created.body.id as string;
    const patch = (body: object) =>
      call(entryRoute.PATCH, { method: "PATCH", key: admin, params: { entry_id: id }, body });
    expect((await patch({ volatile_args: ["nonce"] })).body).toMatchObject({
      volatile_args: ["nonce"],
      effect_class: "money",
    });
    expect((await patch({ effect_class: "destructive" })).body).toMatchObject({
      volatile_args: ["nonce"],
      effect_class: "destructive",
    });
    expect((await patch({ volatile_args: null, verify: null, ...noText })).body).toMatchObject({
      volatile_args: null,
      verify: null,
    });
    for (const volatile_args of [Array.from({ length: 33 }, (_, i) => `a${i}`), ["x".repeat(101)], [""], "memo"]) {
      expect((await patch({ volatile_args })).body.code).toBe("INVALID_REQUEST");
    }
    const trail = await audit(id);
    expect(trail.map((a) => (a.after as { volatile_args: unknown } | null)?.volatile_args)).toEqual([
      ["memo", "attempt"],
      ["nonce"],
      ["nonce"],
      null,
    ]);
    await call(entryRoute.DELETE, { method: "DELETE", key: admin, params: { entry_id: id } });
  });

  it("verify: set on add, changed and turned off by PATCH, audited, each setting validated", async () => {
    const settings = { after_s: 30, every_s: 60, max_tries: 5, absent_after_s: 120, lease_s: 30 };
    const created = await add(admin, {
      runtime: t.runtime,
      pattern: "payout_*",
      effect_class: "money",
      verify: settings,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.verify).toEqual(settings);
    const id = created.body.id as string;
    const patch = (body: object) =>
      call(entryRoute.PATCH, { method: "PATCH", key: admin, params: { entry_id: id }, body });
    expect((await patch({ verify: { ...settings, max_tries: 2 } })).body.verify).toMatchObject({ max_tries: 2 });
    for (const bad of [
      { ...settings, after_s: 0 },
      { ...settings, every_s: 86_401 },
      { ...settings, max_tries: 101 },
      { ...settings, lease_s: 1.5 },
      { ...settings, extra: 1 },
      { after_s: 30 },
    ]) {
      const refused = await patch({ verify: bad });
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.code).toBe("INVALID_REQUEST");
    }
    expect((await patch({ verify: null })).body.verify).toBeNull();
    const trail = await audit(id);
    expect(
      trail.map((a) => (a.after as { verify: { max_tries: number } | null } | null)?.verify?.max_tries ?? null),
    ).toEqual([5, 2, null]);
    const own = await call(ownCatalogRoute.GET, { key: t.key, path: "/api/v1/tool-catalog" });
    expect(own.body.items.find((i: { pattern: string }) => i.pattern === "payout_*")).toMatchObject({ verify: null });
    await call(entryRoute.DELETE, { method: "DELETE", key: admin, params: { entry_id: id } });
  });

  it("loadToolCatalog keeps a copy only within a request that read the settings version, and only while no write moved it", async () => {
    const runtimeId = (await t.db.prisma.runtime.findUniqueOrThrow({ where: { name: "rt-other" } })).id;
    const effect = async () => effectClassFor(await loadToolCatalog(t.db, runtimeId), "charge_card");
    // As a request: the version read, then the catalog (kept).
    const request = <T>(fn: () => Promise<T>) =>
      inSettingsScope(async () => {
        await readSettingsVersion(t.db.driver);
        return fn();
      });
    expect(await request(effect)).toBe("send");
    // Written behind the API's back (as another instance, the CLI or psql would): the trigger bumps the version.
    await t.db.prisma.toolCatalogEntry.updateMany({ where: { runtimeId }, data: { effectClass: "money" } });
    // A request that read the version before the write may still use its copy; the next one may not.
    await inSettingsScope(async () => {
      await readSettingsVersion(t.db.driver);
      expect(await effect()).toBe("money");
      await t.db.driver.query(
        `UPDATE tool_catalog_entries SET effect_class = 'destructive' WHERE runtime_id = $1::uuid`,
        [runtimeId],
      );
      expect(await effect()).toBe("money");
    });
    expect(await request(effect)).toBe("destructive");
    // Outside a request (a job, a page, the CLI) nothing kept is used.
    await t.db.driver.query(`UPDATE tool_catalog_entries SET effect_class = 'read' WHERE runtime_id = $1::uuid`, [
      runtimeId,
    ]);
    expect(await effect()).toBe("read");
    await add(admin, { runtime: "rt-other", pattern: "charge_card", effect_class: "send" });
    expect(await request(effect)).toBe("send");
  });

  it(`stops at ${CATALOG_LIMIT} entries a runtime with CATALOG_FULL`, async () => {
    const { runtime } = await createRuntimeKey(t.db, "rt-full");
    const runtimeId = (await t.db.prisma.runtime.findUniqueOrThrow({ where: { name: runtime } })).id;
    await t.db.prisma.toolCatalogEntry.createMany({
      data: Array.from({ length: CATALOG_LIMIT - 1 }, (_, i) => ({
        runtimeId,
        pattern: `tool_${i}`,
        effectClass: "read",
      })),
    });
    const results = await Promise.all([
      add(admin, { runtime, pattern: "last_a", effect_class: "read" }),
      add(admin, { runtime, pattern: "last_b", effect_class: "read" }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(results.find((r) => r.status === 409)?.body).toMatchObject({
      code: "CATALOG_FULL",
      safe_details: { limit: CATALOG_LIMIT },
    });
    expect(await t.db.prisma.toolCatalogEntry.count({ where: { runtimeId } })).toBe(CATALOG_LIMIT);
  });
});
