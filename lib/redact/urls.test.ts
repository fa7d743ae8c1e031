import { describe, expect, it } from "vitest";
import { redactUrl } from "./urls";

// Webhook and channel URLs as the audit trail shows them: the host and the path's words, never the key.
const key = (n: number) => "Kq7Wz2Xv9Bn4Lm1Jh6Gf3Ds8Ap0Tr5Yc".repeat(3).slice(0, n);

describe("redactUrl", () => {
  it.each([
    [
      "Slack",
      `https://hooks.slack.com/services/T0123ABCD/B0456EFGH/${key(24)}`,
      "https://hooks.slack.com/services/[redacted]/[redacted]/[redacted]",
    ],
    [
      "Discord",
      `https://discord.com/api/webhooks/112233445566778899/${key(68)}`,
      "https://discord.com/api/webhooks/112233445566778899/[redacted]",
    ],
    [
      "Discord's Slack-compatible form",
      `https://discord.com/api/webhooks/112233445566778899/${key(68)}/slack`,
      "https://discord.com/api/webhooks/112233445566778899/[redacted]/slack",
    ],
    [
      "Mattermost",
      "https://chat.example.com/hooks/xi3t6fyqk7bm5gxjc8e4a1odpr",
      "https://chat.example.com/hooks/[redacted]",
    ],
    [
      "a token in the query",
      `https://alerts.example.com/notify?token=${key(20)}&channel=ops`,
      "https://alerts.example.com/notify?token=[redacted]&channel=[redacted]",
    ],
    [
      "Azure Functions' code",
      `https://fn.azurewebsites.net/api/settle?code=${key(40)}`,
      "https://fn.azurewebsites.net/api/settle?code=[redacted]",
    ],
    [
      "Teams",
      `https://acme.webhook.office.com/webhookb2/6f1c2b3a-0d4e-4f5a-9b8c-7d6e5f4a3b2c@9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d/IncomingWebhook/${key(32)}/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d`,
      "https://acme.webhook.office.com/webhookb2/[redacted]/IncomingWebhook/[redacted]/[redacted]",
    ],
    [
      "Zapier",
      "https://hooks.zapier.com/hooks/catch/1234567/abc12de/",
      "https://hooks.zapier.com/hooks/catch/1234567/[redacted]/",
    ],
    ["a plain path", "https://ops.example.com/settle/webhooks", "https://ops.example.com/settle/webhooks"],
    ["not a URL", "no url here", "no url here"],
  ])("%s", (_kind, url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});
