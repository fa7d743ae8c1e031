import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, openSettle, type Backend, type TestContext } from "./harness";
import { getInvocation, getTask, ingest } from "./routes";
import { stringifyExactJson } from "@/lib/json/exact";

// A secret inside a text part (JSON in text, or a credential in prose) reaches
// neither the stored envelope nor any field read from it, through the whole
// ingest path, while the rest of the text is kept as evidence.

const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 6, 0, s)).toISOString();

// Fake credentials, built from parts so that no secret scanner takes this file for a leak.
const rand = (n: number) => "Zq7Xw2Vb9Nm4Kl1Jh6Gf3Ds8Ap0".repeat(8).slice(0, n);
const openaiKey = `sk-${"proj-"}${rand(48)}`;
const anthropicKey = `sk-${"ant-"}api03-${rand(60)}`;
const githubToken = `${"ghp_"}${rand(36)}`;
const bearerToken = rand(32);
const dbPassword = "s3cretPassw0rd";
const pemBody = rand(64);
const pem = ["-----BEGIN OPENSSH PRIVATE KEY-----", pemBody, "-----END OPENSSH PRIVATE KEY-----"].join("\n");
const secrets = [openaiKey, anthropicKey, githubToken, bearerToken, dbPassword, pemBody, "hunter2"];

function expectNoSecret(value: unknown) {
  const text = stringifyExactJson(value);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describe.each<Backend>(["postgres", "pglite"])("secrets in text parts, on %s", (backend) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await openSettle(backend);
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("an MCP record: neither the stored envelope nor agent_message holds the secret", async () => {
    const res = await call(ingest, {
      key: t.key,
      body: {
        event_id: "red-mcp-1",
        task_id: "red-1",
        invocation_id: "inv-red-mcp",
        tool: "deploy",
        effect_class: "create",
        at: at(0),
        envelope: {
          content: [
            { type: "text", text: JSON.stringify({ api_key: openaiKey, region: "eu-west-1" }) },
            {
              type: "text",
              text: `upstream said: Bearer ${bearerToken} was rejected by postgres://deploy:${dbPassword}@db.internal:5432/app`,
            },
          ],
          isError: true,
        },
      },
    });
    expect(res.status).toBe(207);
    expect(res.body.results[0].status).toBe("accepted");

    const row = await t.db.prisma.attempt.findFirstOrThrow({ where: { eventKey: "red-mcp-1" } });
    expectNoSecret(row);
    const envelope = row.envelope as { content: { type: string; text: string }[]; isError: boolean };
    expect(envelope.isError).toBe(true);
    expect(envelope.content[0]!.text).toBe('{"api_key":"[redacted]","region":"eu-west-1"}');
    expect(envelope.content[1]!.text).toBe(
      "upstream said: Bearer [redacted] was rejected by postgres://deploy:[redacted]@db.internal:5432/app",
    );
    expect(row).toMatchObject({ dialect: "mcp", commitState: "unknown" });
    expect(row.agentMessage).toBe(`${envelope.content[0]!.text}\n${envelope.content[1]!.text}`);

    const inv = await call(getInvocation, { key: t.key, params: { invocation_id: "inv-red-mcp" } });
    expect(inv.status).toBe(200);
    expectNoSecret(inv.body);
    expect(inv.body.attempts[0].agent_message).toContain("upstream said: Bearer [redacted] was rejected");
    expect(inv.body.attempts[0].envelope).toEqual(envelope);
  });

  it("an Anthropic record: a known envelope inside its text is read from the redacted text", async () => {
    const inner = {
      ok: false,
      commit_state: "unknown",
      code: "OUTCOME_UNKNOWN",
      next_action: "verify_operation",
      agent_message: `the gateway used ${githubToken} and timed out`,
      user_message: `Ask ops to rotate ${anthropicKey}.`,
      safe_details: { field: "amount", password: "hunter2", note: `key was ${openaiKey}` },
    };
    const res = await call(ingest, {
      key: t.key,
      body: {
        event_id: "red-anth-1",
        task_id: "red-1",
        invocation_id: "inv-red-anth",
        tool: "charge",
        effect_class: "money",
        at: at(1),
        envelope: {
          type: "tool_result",
          tool_use_id: "toolu_01Red",
          is_error: true,
          content: [
            { type: "text", text: JSON.stringify(inner) },
            { type: "text", text: `deploy key:\n${pem}\nend of output` },
          ],
        },
      },
    });
    expect(res.body.results[0].status).toBe("accepted");

    const row = await t.db.prisma.attempt.findFirstOrThrow({ where: { eventKey: "red-anth-1" } });
    expectNoSecret(row);
    expect(row).toMatchObject({
      dialect: "settle",
      wrapperDialect: "anthropic",
      code: "OUTCOME_UNKNOWN",
      commitState: "unknown",
      agentMessage: "the gateway used [redacted] and timed out",
      userMessage: "Ask ops to rotate [redacted].",
      safeDetails: { field: "amount", password: "[redacted]", note: "key was [redacted]" },
    });
    const envelope = row.envelope as { tool_use_id: string; content: { text: string }[] };
    expect(envelope.tool_use_id).toBe("toolu_01Red");
    expect(JSON.parse(envelope.content[0]!.text)).toMatchObject({
      code: "OUTCOME_UNKNOWN",
      agent_message: "the gateway used [redacted] and timed out",
      safe_details: { password: "[redacted]" },
    });
    expect(envelope.content[1]!.text).toBe("deploy key:\n[redacted]\nend of output");

    const invocation = await t.db.prisma.invocation.findFirstOrThrow({ where: { invocationId: "inv-red-anth" } });
    expectNoSecret(invocation);
    expect(invocation.userMessage).toBe("Ask ops to rotate [redacted].");

    const task = await call(getTask, { key: t.key, params: { task_id: "red-1" } });
    expect(task.status).toBe(200);
    expectNoSecret(task.body);
  });

  it("a clean text part is stored byte for byte", async () => {
    const text = '{ "type": "https://errors.example.com/rate-limited",  "status": 429, "detail": "slow down" }';
    await call(ingest, {
      key: t.key,
      body: {
        event_id: "red-clean-1",
        task_id: "red-2",
        invocation_id: "inv-red-clean",
        tool: "search",
        effect_class: "read",
        at: at(2),
        envelope: { content: [{ type: "text", text }], isError: true },
      },
    });
    const row = await t.db.prisma.attempt.findFirstOrThrow({ where: { eventKey: "red-clean-1" } });
    expect((row.envelope as { content: { text: string }[] }).content[0]!.text).toBe(text);
    expect(row).toMatchObject({ dialect: "rfc9457", wrapperDialect: "mcp", agentMessage: "slow down" });
  });
});
