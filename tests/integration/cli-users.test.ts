import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, openSettle, type TestContext, runSettleCli } from "./harness";
import { listInvocations } from "./routes";

const settle = runSettleCli;

describe("settle users create / tokens create", () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle("postgres");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("creates a user with a generated password printed once, and a token that acts as them", async () => {
    const user = await settle(["users", "create", "--email", "Ana@Example.com", "--role", "viewer"]);
    expect(user.code).toBe(0);
    expect(user.stdout.trim()).toMatch(/^\S{12,}$/);
    expect(user.stderr).toContain("Created viewer ana@example.com");

    const token = await settle(["tokens", "create", "--email", "ana@example.com", "--name", "laptop"]);
    expect(token.code).toBe(0);
    expect(token.stdout.trim()).toMatch(/^stl_pat_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
    const res = await call(listInvocations, { key: token.stdout.trim(), path: "/api/v1/invocations" });
    expect(res.status).toBe(200);
  });

  it("refuses a duplicate email, an unknown role and a token for nobody, with one line and exit 1", async () => {
    await settle([
      "users",
      "create",
      "--email",
      "bo@example.com",
      "--role",
      "operator",
      "--password",
      "a long enough password",
    ]);
    const again = await settle(["users", "create", "--email", "bo@example.com", "--role", "operator"]);
    expect(again).toMatchObject({ code: 1, stdout: "" });
    expect(again.stderr).toMatch(/already exists/);
    const badRole = await settle(["users", "create", "--email", "cy@example.com", "--role", "boss"]);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toMatch(/--role/);
    const nobody = await settle(["tokens", "create", "--email", "nobody@example.com"]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/no user nobody@example.com/);
  });
});
