import { describe, expect, it } from "vitest";
import { notificationEventFor, type TransitionForNotice } from "./events";
import { buildDigest, renderEmail, renderSlack, type NoticeFacts } from "./message";

describe("notificationEventFor", () => {
  const cases: Array<[string, TransitionForNotice, string | null]> = [
    ["a new unknown", { fromStatus: "pending", status: "outcome_unknown", hasVerifier: false }, "unknown"],
    ["a first record that is unknown", { fromStatus: null, status: "outcome_unknown", hasVerifier: false }, "unknown"],
    ["partly applied", { fromStatus: "pending", status: "partially_applied", hasVerifier: false }, "unknown"],
    [
      "an unknown a verifier will ask about first",
      { fromStatus: "pending", status: "outcome_unknown", hasVerifier: true },
      null,
    ],
    [
      "already unknown, told once",
      { fromStatus: "outcome_unknown", status: "partially_applied", hasVerifier: false },
      null,
    ],
    [
      "verification gave up (failed probe)",
      { fromStatus: "verifying", status: "escalated", hasVerifier: true },
      "unknown",
    ],
    [
      "verification found it partial",
      { fromStatus: "verifying", status: "partially_applied", hasVerifier: true },
      "unknown",
    ],
    ["verification settled it", { fromStatus: "verifying", status: "reconciled", hasVerifier: true }, null],
    [
      "nobody serves the verifier (an unknown Settle never asked about)",
      { fromStatus: "outcome_unknown", status: "escalated", hasVerifier: true, reason: "no_verifier_running" },
      "unknown",
    ],
    ["an SLA escalation", { fromStatus: "outcome_unknown", status: "escalated", hasVerifier: false }, "escalated"],
    ["approval needed", { fromStatus: null, status: "awaiting_approval", hasVerifier: false }, "approval_needed"],
    ["settled", { fromStatus: "outcome_unknown", status: "reconciled", hasVerifier: false }, null],
    ["succeeded", { fromStatus: "pending", status: "succeeded", hasVerifier: false }, null],
  ];
  it.each(cases)("%s", (_name, transition, event) => {
    expect(notificationEventFor(transition)?.event ?? null).toBe(event);
  });
});

const item = (over: Partial<NoticeFacts> = {}): NoticeFacts => ({
  event: "unknown",
  why: "the outcome is unknown",
  invocation_id: "inv-1",
  task_id: "task-1",
  runtime: "billing-agent",
  tool: "create_refund",
  effect_class: "money",
  status: "outcome_unknown",
  summary: "120.00 EUR to cus_1",
  since: "2026-12-04T10:00:00.000Z",
  link: "https://settle.example.com/invocations/inv-1?runtime=billing-agent",
  ...over,
});

describe("messages", () => {
  const at = new Date("2026-12-04T10:05:00.000Z");

  it("Slack: a caller's text cannot make a link, a mention or markup; no button anywhere", () => {
    const hostile = item({ summary: "<!channel> pay <https://evil.example|here> & more", tool: "create_<b>" });
    const message = renderSlack(buildDigest("ntf_1", at, [hostile], { unknown: 1 }, "https://settle.example.com/"), at);
    const section = (message.blocks[1] as { text: { text: string } }).text.text;
    expect(section).toContain("&lt;!channel&gt; pay &lt;https://evil.example¦here&gt; &amp; more");
    expect(section).toContain("create_&lt;b&gt;");
    expect(section).toContain("for 5 min");
    expect(message.text).not.toContain("<!channel>");
    expect(JSON.stringify(message)).not.toMatch(/"(actions|button)"/);
  });

  it("names the first five and counts the rest", () => {
    const items = Array.from({ length: 5 }, (_, i) => item({ invocation_id: `inv-${i}` }));
    const digest = buildDigest("ntf_2", at, items, { unknown: 7, approval_needed: 3 }, "https://settle.example.com/");
    expect(digest.count).toBe(10);
    const slack = renderSlack(digest, at);
    expect((slack.blocks[0] as { text: { text: string } }).text.text).toBe("10 calls need a person");
    expect(JSON.stringify(slack.blocks.at(-1))).toContain("…and 5 more");
    const email = renderEmail(digest, at);
    expect(email.subject).toBe("[Settle] 10 calls need a person: 120.00 EUR to cus_1");
    expect(email.text).toContain("…and 5 more.");
  });

  it("says each call's age as of sending, not as of composing", () => {
    const digest = buildDigest("ntf_4", at, [item()], { unknown: 1 }, "https://settle.example.com/");
    const eightMinutesLater = new Date(at.getTime() + 8 * 60_000);
    expect(JSON.stringify(renderSlack(digest, at))).toContain("for 5 min");
    expect(JSON.stringify(renderSlack(digest, eightMinutesLater))).toContain("for 13 min");
    expect(renderEmail(digest, eightMinutesLater).text).toContain("for 13 min");
  });

  it("email: the subject is one line whatever the summary holds", () => {
    const digest = buildDigest("ntf_3", at, [item({ summary: "a\r\nBcc: x@evil.example" })], { unknown: 1 }, "u");
    expect(renderEmail(digest, at).subject).not.toMatch(/[\r\n]/);
  });
});
