import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as commands } from "@/app/api/v1/integrations/slack/commands/route";
import { POST as commandCode } from "@/app/api/v1/me/slack-links/command-code/route";
import * as mySlackLinks from "@/app/api/v1/me/slack-links/route";
import { getLinkedPerson } from "@/lib/slack/links";
import { normalizeCommandCode } from "@/lib/slack/commands";
import { slackAppManifest } from "@/lib/slack/manifest";
import { setSlackSettings } from "@/lib/slack/settings";
import { slackSignature } from "@/lib/slack/signature";
import { call, createOperator, openSettle, type TestContext } from "./harness";

// Linking from Slack with `/settle link CODE`: the console shows a person a one-time code, Slack sends the
// slash command form-encoded and signed like every request of its own, and the Slack user who typed it is
// linked to that person — once, within ten minutes, only with Slack's valid signature.

const SECRET = "0c7a6b1e22d94f3f8e5a7b9c11d2e3f4";
const PATH = "/api/v1/integrations/slack/commands";

describe("Slack slash command /settle link", () => {
  let t: TestContext;
  let operator: Awaited<ReturnType<typeof createOperator>>;
  let viewer: Awaited<ReturnType<typeof createOperator>>;

  function signed(fields: Record<string, string>, options: { at?: number; secret?: string } = {}) {
    const raw = new URLSearchParams({
      token: "deprecated-verification-token",
      team_id: "T0001",
      channel_id: "C0001",
      command: "/settle",
      response_url: "https://hooks.slack.com/commands/T0001/1/abc",
      trigger_id: "1.2.3",
      ...fields,
    }).toString();
    const ts = String(options.at ?? Math.floor(Date.now() / 1000));
    return {
      raw,
      headers: {
        "x-slack-request-timestamp": ts,
        "x-slack-signature": slackSignature(options.secret ?? SECRET, ts, raw),
      },
    };
  }
  const post = (req: { raw: string; headers?: Record<string, string> }) =>
    call(commands, {
      path: PATH,
      raw: req.raw,
      contentType: "application/x-www-form-urlencoded",
      headers: req.headers,
    });
  const issue = async (token: string) => {
    const res = await call(commandCode, { key: token, path: "/api/v1/me/slack-links/command-code" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { code: string; command: string; expires_at: string };
  };
  const linkCount = async () =>
    Number((await t.db.driver.query<{ n: string }>(`SELECT count(*)::text AS n FROM slack_links`))[0]!.n);

  beforeAll(async () => {
    t = await openSettle("postgres", { SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    operator = await createOperator(t.db, "operator");
    viewer = await createOperator(t.db, "viewer");
  });
  afterAll(async () => {
    await t?.teardown();
  });

  it("makes no code before the Slack app is set up, and refuses every command (401)", async () => {
    const res = await call(commandCode, { key: operator.token, path: "/api/v1/me/slack-links/command-code" });
    expect(res.status).toBe(400);
    expect(res.body.agent_message).toContain("not set up");
    const cmd = await post(signed({ user_id: "U0SLASH01", text: "link AAAA-AAAA-AAAA-AAAA" }));
    expect(cmd.status).toBe(401);
    await setSlackSettings(t.db, { signing_secret: SECRET, bot_token: "xoxb-1-2-test" }, "admin@example.com");
  });

  it("a code made for a person links the Slack user who types it, once; only its hash is stored", async () => {
    const made = await issue(operator.token);
    expect(made.code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
    expect(made.command).toBe(`/settle link ${made.code}`);
    expect(Date.parse(made.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    const stored = await t.db.driver.query<{ code_hash: string }>(`SELECT code_hash FROM slack_command_codes`);
    expect(JSON.stringify(stored)).not.toContain(made.code.replaceAll("-", ""));

    // Typed in lower case, without dashes: the same code.
    const typed = made.code.toLowerCase().replaceAll("-", " ");
    const res = await post(signed({ user_id: "U0SLASH01", text: `link ${typed}` }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ response_type: "ephemeral" });
    expect(res.body.text).toContain(`act as ${operator.user.email} (operator)`);
    expect(await getLinkedPerson(t.db, "U0SLASH01")).toEqual({ email: operator.user.email, role: "operator" });
    const mine = await call(mySlackLinks.GET, { key: operator.token, path: "/api/v1/me/slack-links" });
    expect(mine.body.items.map((l: { slack_user_id: string }) => l.slack_user_id)).toEqual(["U0SLASH01"]);
    const audit = await t.db.driver.query<{ actor: string; target_id: string }>(
      `SELECT actor, target_id FROM admin_actions WHERE action = 'slack_link_added'`,
    );
    expect(audit).toEqual([{ actor: operator.user.email, target_id: "U0SLASH01" }]);

    // Used once: the same code from another Slack user (a fresh, validly signed request) links nobody.
    const again = await post(signed({ user_id: "U0SLASH02", text: `link ${made.code}` }));
    expect(again.status).toBe(200);
    expect(again.body.text).toContain("wrong, used or expired");
    expect(await getLinkedPerson(t.db, "U0SLASH02")).toBeNull();
  });

  it("a bad signature, a stale timestamp, an altered body, no signature and a replay are 401 and link nobody", async () => {
    const made = await issue(operator.token);
    const body = { user_id: "U0SLASH03", text: `link ${made.code}` };
    const before = await linkCount();

    const wrong = await post(signed(body, { secret: "not-the-signing-secret-at-all" }));
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe("UNAUTHENTICATED");
    const stale = await post(signed(body, { at: Math.floor(Date.now() / 1000) - 6 * 60 }));
    expect(stale.status).toBe(401);
    const good = signed(body);
    const altered = await post({ ...good, raw: good.raw.replace("U0SLASH03", "U0SLASH04") });
    expect(altered.status).toBe(401);
    const unsigned = await post({ raw: good.raw });
    expect(unsigned.status).toBe(401);
    expect(await linkCount()).toBe(before);
    // The code is still good after all of those: none of them reached it.
    expect(await t.db.driver.query(`SELECT 1 FROM slack_command_codes`)).toHaveLength(1);

    const taken = await post(good);
    expect(taken.status).toBe(200);
    expect(taken.body.text).toContain("act as");
    const replayed = await post(good);
    expect(replayed.status).toBe(401);
    expect(JSON.stringify(replayed.body)).toContain("already received");
    expect(await linkCount()).toBe(before + 1);
  });

  it("a wrong, malformed or expired code links nobody; anything but link answers how", async () => {
    const made = await issue(operator.token);
    const before = await linkCount();
    const flip = (c: string) => (c[0] === "A" ? `B${c.slice(1)}` : `A${c.slice(1)}`);
    const wrong = await post(signed({ user_id: "U0SLASH05", text: `link ${flip(made.code)}` }));
    expect(wrong.body.text).toContain("wrong, used or expired");
    const malformed = await post(signed({ user_id: "U0SLASH05", text: "link 12345678" }));
    expect(malformed.body.text).toContain("not a Settle link code");
    const help = await post(signed({ user_id: "U0SLASH05", text: "" }));
    expect(help.status).toBe(200);
    expect(help.body.text).toContain("/settle link CODE");
    expect(await linkCount()).toBe(before);

    // A new code replaces the one before; an expired one links nobody.
    const newer = await issue(operator.token);
    const replaced = await post(signed({ user_id: "U0SLASH05", text: `link ${made.code}` }));
    expect(replaced.body.text).toContain("wrong, used or expired");
    await t.db.driver.query(`UPDATE slack_command_codes SET expires_at = now() - interval '1 second'`);
    const expired = await post(signed({ user_id: "U0SLASH05", text: `link ${newer.code}` }));
    expect(expired.body.text).toContain("wrong, used or expired");
    expect(await linkCount()).toBe(before);
  });

  it("links a viewer, saying their role cannot act; a Slack user id Slack would not send links nobody", async () => {
    const made = await issue(viewer.token);
    const odd = await post(signed({ user_id: "not-a-slack-id", text: `link ${made.code}` }));
    expect(odd.body.text).toContain("did not say who you are");
    const res = await post(signed({ user_id: "W0SLASHV", text: `link ${made.code}` }));
    expect(res.body.text).toContain("(viewer) cannot act");
    expect(await getLinkedPerson(t.db, "W0SLASHV")).toEqual({ email: viewer.user.email, role: "viewer" });
  });

  it("docs/slack.md's manifest is the one Admin → Slack app shows, with the example address", () => {
    const doc = readFileSync("docs/slack.md", "utf8");
    const block = /```yaml\n([\s\S]*?)\n\s*```/.exec(doc)?.[1] ?? "";
    const manifest = block.replace(/^ {3}/gm, "");
    const base = "https://settle.example.com/api/v1/integrations/slack";
    expect(`${manifest}\n`).toBe(
      slackAppManifest({ interactivity: `${base}/interactions`, slashCommand: `${base}/commands` }),
    );
  });

  it("reads a typed code leniently: case, spaces, dashes and Crockford's look-alikes", () => {
    expect(normalizeCommandCode("abcd-efgh jkmn-pqrs")).toBe("ABCDEFGHJKMNPQRS");
    expect(normalizeCommandCode("o0il-1111-2222-3333")).toBe("0011111122223333");
  });
});
