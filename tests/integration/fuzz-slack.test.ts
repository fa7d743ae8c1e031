import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slackClicksTaken } from "@/lib/slack/interactions";
import { setSlackSettings } from "@/lib/slack/settings";
import { slackSignature } from "@/lib/slack/signature";
import { apiRoutes } from "@/server/routes";
import { call, createOperator, openSettle, type TestContext } from "./harness";
import { expectSettled, hostileText, hostileValue } from "./fuzz-inputs";

// Hostile input against the Slack routes (decision 012: a caller's data never causes a 5xx): the admin's
// settings and links, a person's own linking, and what claims to come from Slack — unsigned, wrongly signed,
// and signed with the right secret around a body that is anything but what Slack sends. Every answer is below
// 500 and every error is Settle's envelope; the settings never answer a secret that was stored.

const settings = apiRoutes["/api/v1/admin/integrations/slack"];
const links = apiRoutes["/api/v1/admin/slack-links"];
const link = apiRoutes["/api/v1/admin/slack-links/{slack_user_id}"];
const mine = apiRoutes["/api/v1/me/slack-links"];
const mineOne = apiRoutes["/api/v1/me/slack-links/{slack_user_id}"];
const confirm = apiRoutes["/api/v1/me/slack-links/confirm"];
const commandCode = apiRoutes["/api/v1/me/slack-links/command-code"];
const interactions = apiRoutes["/api/v1/integrations/slack/interactions"];
const commands = apiRoutes["/api/v1/integrations/slack/commands"];

const SECRET = "fuzz-signing-secret-0123456789abcdef";
const someOf = <T>(a: fc.Arbitrary<T>) => fc.oneof(hostileValue, hostileText, a);
const slackId = fc.oneof(hostileText, fc.stringMatching(/^[UW][A-Z0-9]{2,12}$/));
const signingSecret = fc.oneof(hostileText, fc.string({ minLength: 12, maxLength: 40 }));
const botToken = fc.oneof(
  hostileText,
  fc.string({ minLength: 8, maxLength: 30 }).map((s) => `xoxb-${s}`),
);
// Addresses by IP only: no name is looked up, as a hostile host name would be on a machine without DNS.
const address = fc.oneof(
  hostileText,
  fc.constantFrom("http://127.0.0.1:9/api", "https://[::1]/api", "http://169.254.169.254/", "ftp://10.0.0.1/", ""),
);
const policy = fc.oneof(
  hostileValue,
  fc.dictionary(
    fc.oneof(fc.constantFrom("money", "destructive", "send", "create", "read", "unclassified"), hostileText),
    fc.oneof(hostileValue, fc.array(fc.oneof(fc.constantFrom("approve", "reject", "record", "escalate"), hostileText))),
  ),
);
const settingsBody = fc.oneof(
  hostileValue,
  // Bodies that are taken, so the check that no stored secret is answered has secrets to look for.
  fc.record(
    {
      signing_secret: fc.string({ minLength: 12, maxLength: 40 }),
      bot_token: fc.string({ minLength: 8, maxLength: 30 }).map((s) => `xoxb-${s}`),
      api_base_url: fc.constant("http://127.0.0.1:9/api"),
    },
    { requiredKeys: [] },
  ),
  fc.record(
    {
      signing_secret: someOf(signingSecret),
      bot_token: someOf(botToken),
      api_base_url: someOf(address),
      actions: policy,
    },
    { requiredKeys: [] },
  ),
);

/** Any value as JSON text, or nothing when it has none (a BigInt, a cycle). */
function asText(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

/** Text a header can carry at all (a request with a control character in a header is never made). */
const headerText = fc
  .oneof(hostileText, fc.string({ maxLength: 80 }))
  .map((v) => v.replace(/[^\x20-\x7e]/g, "").trim());

/** A body that is not what Slack sends: anything, form-encoded or not, with a payload or a command of anything. */
const slackBody = fc.oneof(
  hostileText,
  hostileValue.map((v) => `payload=${encodeURIComponent(asText(v))}`),
  fc
    .record({
      type: fc.oneof(fc.constantFrom("block_actions", "view_submission", "shortcut"), hostileText),
      user: fc.oneof(hostileValue, fc.record({ id: slackId })),
      actions: fc.oneof(
        hostileValue,
        fc.array(fc.record({ action_id: hostileText, value: fc.oneof(hostileText, hostileValue.map(asText)) })),
      ),
      view: hostileValue,
      response_url: hostileText,
    })
    .map((p) => `payload=${encodeURIComponent(asText(p))}`),
  fc
    .record({
      command: hostileText,
      text: fc.oneof(
        hostileText,
        hostileText.map((s) => `link ${s}`),
      ),
      user_id: slackId,
    })
    .map((f) => new URLSearchParams(f).toString()),
);

describe("hostile input to the Slack routes", () => {
  let t: TestContext;
  let admin: string;
  let viewer: string;

  beforeAll(async () => {
    t = await openSettle("postgres", { SETTLE_WEBHOOK_ALLOW_PRIVATE: "1" });
    admin = (await createOperator(t.db, "admin")).token;
    viewer = (await createOperator(t.db, "viewer")).token;
    // Set up once, so a PUT with one secret or none is taken too (the first must carry both).
    await setSlackSettings(t.db, { signing_secret: SECRET, bot_token: "xoxb-1-2-fuzz" }, "admin@example.com");
  });
  afterAll(() => t?.teardown());

  it("settings: every body answered and typed, and no secret ever answered", async () => {
    const stored: string[] = [];
    await fc.assert(
      fc.asyncProperty(settingsBody, async (body) => {
        const put = expectSettled("PUT", await call(settings.PUT, { method: "PUT", key: admin, body }));
        if (put.status === 200) {
          const sent = body as Record<string, unknown>;
          for (const k of ["signing_secret", "bot_token"])
            // Long enough that the answer's own words (class and action names) cannot hold it by chance.
            if (typeof sent[k] === "string" && (sent[k] as string).trim().length >= 12)
              stored.push((sent[k] as string).trim());
        }
        const got = expectSettled("GET", await call(settings.GET, { key: admin }));
        expect(got.status).toBe(200);
        const text = JSON.stringify(got.body);
        for (const secret of stored) expect(text).not.toContain(secret);
      }),
      { numRuns: 200 },
    );
    expect(stored.length).toBeGreaterThan(0);
  });

  it("links and a person's own linking: every body, id and code answered and typed", async () => {
    await setSlackSettings(
      t.db,
      { signing_secret: SECRET, bot_token: "xoxb-1-2-fuzz", api_base_url: "http://127.0.0.1:9/api" },
      "admin@example.com",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileValue, fc.record({ email: someOf(fc.emailAddress()), slack_user_id: someOf(slackId) })),
        fc.oneof(hostileText, slackId),
        fc.oneof(hostileValue, fc.record({ slack_user_id: someOf(slackId) })),
        fc.oneof(hostileValue, fc.record({ code: someOf(fc.stringMatching(/^\d{8}$/)) })),
        async (newLink, id, start, code) => {
          expectSettled("add link", await call(links.POST, { key: admin, body: newLink }));
          expectSettled(
            "remove link",
            await call(link.DELETE, { method: "DELETE", key: admin, params: { slack_user_id: id } }),
          );
          for (const key of [admin, viewer]) {
            expectSettled("start", await call(mine.POST, { key, body: start }));
            expectSettled("confirm", await call(confirm.POST, { key, body: code }));
            expectSettled("command code", await call(commandCode.POST, { key, body: start }));
            expectSettled(
              "remove own link",
              await call(mineOne.DELETE, { method: "DELETE", key, params: { slack_user_id: id } }),
            );
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("what claims to come from Slack: unsigned, wrongly signed or signed around anything, never a 5xx", async () => {
    // Each route gets its own timestamp, so one signed body is new to both (a body seen before is a replay).
    const routes = [
      { name: "interactions", post: interactions.POST, skew: 0, taken: 0 },
      { name: "commands", post: commands.POST, skew: 1, taken: 0 },
    ];
    await fc.assert(
      fc.asyncProperty(
        slackBody,
        fc.oneof(
          fc.constant<"right">("right"),
          fc.record({ timestamp: fc.oneof(headerText, fc.integer().map(String)), signature: headerText }),
        ),
        async (raw, signing) => {
          for (const route of routes) {
            const ts = String(Math.floor(Date.now() / 1000) - route.skew);
            const headers =
              signing === "right"
                ? { "x-slack-request-timestamp": ts, "x-slack-signature": slackSignature(SECRET, ts, raw) }
                : { "x-slack-request-timestamp": signing.timestamp, "x-slack-signature": signing.signature };
            const res = expectSettled(
              route.name,
              await call(route.post, { raw, contentType: "application/x-www-form-urlencoded", headers }),
            );
            if (signing !== "right") expect(res.status).toBe(401);
            else if (res.status === 200) route.taken += 1;
          }
          await slackClicksTaken();
        },
      ),
      { numRuns: 200 },
    );
    // The signed bodies got past the signature to the parsers behind it.
    for (const route of routes) expect(route.taken, route.name).toBeGreaterThan(10);
  });
});
