import { statusLabels } from "../outcome/labels";
import type { InvocationStatus } from "../outcome/status";
import { notificationEventLabels, type NotificationEvent } from "./events";

// A channel's message, pure: the digest as queued in the outbox (what the delivery log shows), and how it
// reads in Slack (Block Kit) and in an email (plain text). Never a button that decides: decisions are made
// signed in, in the console, where the person and their note are recorded.

/** How many calls a message names; the rest are counted. */
export const DIGEST_NAMES = 5;

export type NoticeFacts = {
  event: NotificationEvent;
  why: string;
  invocation_id: string;
  task_id: string;
  runtime: string;
  tool: string;
  effect_class: string | null;
  status: InvocationStatus;
  summary: string | null;
  /** When it began to need a person. */
  since: string;
  /** The invocation in the console. */
  link: string;
};

export type Digest = {
  id: string;
  type: "notification.digest";
  created_at: string;
  count: number;
  counts: Partial<Record<NotificationEvent, number>>;
  items: NoticeFacts[];
  queue_link: string;
};

export function buildDigest(
  id: string,
  createdAt: Date,
  named: readonly NoticeFacts[],
  counts: Partial<Record<NotificationEvent, number>>,
  queueLink: string,
): Digest {
  const count = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
  return {
    id,
    type: "notification.digest",
    created_at: createdAt.toISOString(),
    count,
    counts,
    items: named.slice(0, DIGEST_NAMES),
    queue_link: queueLink,
  };
}

export function ageText(fromIso: string, nowIso: string): string {
  const s = Math.max(0, Math.round((Date.parse(nowIso) - Date.parse(fromIso)) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "3 calls need a person" and, when they are of one kind, what kind. */
export function headline(d: Digest): string {
  const kinds = Object.keys(d.counts) as NotificationEvent[];
  const what = kinds.length === 1 ? `: ${notificationEventLabels[kinds[0]!].toLowerCase()}` : "";
  return `${plural(d.count, "call needs", "calls need")} a person${what}`;
}

const nameOf = (item: NoticeFacts) => item.summary ?? item.tool;

/** One line of plain text per named call. */
export function itemLine(item: NoticeFacts, nowIso: string): string {
  return [
    item.summary ? `${item.tool}: ${item.summary}` : item.tool,
    item.runtime,
    `${statusLabels[item.status]} (${item.why})`,
    `for ${ageText(item.since, nowIso)}`,
  ].join(" · ");
}

// Slack's mrkdwn reads &, < and > as markup: a caller's text must not make a link or a mention.
const slackText = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
// A link's text also ends at "|".
const slackLinkText = (text: string) => slackText(text).replaceAll("|", "¦");

export type SlackMessage = { text: string; blocks: unknown[] };

/** `sentAt`: the try's time, which the ages are counted to. */
export function renderSlack(d: Digest, sentAt: Date): SlackMessage {
  const now = sentAt.toISOString();
  const more = d.count - d.items.length;
  const sections = d.items.map((item) => ({
    type: "section",
    text: {
      type: "mrkdwn",
      text: [
        `*<${item.link}|${slackLinkText(nameOf(item))}>*`,
        slackText(
          [
            item.tool,
            item.runtime,
            item.effect_class ?? "unclassified",
            `${statusLabels[item.status]} (${item.why})`,
            `for ${ageText(item.since, now)}`,
          ].join(" · "),
        ),
      ].join("\n"),
    },
  }));
  return {
    // The notification's own line (and what a receiver without blocks shows).
    text: slackText(`Settle: ${headline(d)}${d.items[0] ? ` — ${nameOf(d.items[0])}` : ""}`),
    blocks: [
      { type: "header", text: { type: "plain_text", text: headline(d).slice(0, 150) } },
      ...sections,
      {
        type: "context",
        elements: [
          {
            type: "mrkdwn",
            text: `${more > 0 ? `…and ${more} more · ` : ""}<${d.queue_link}|Open the queue in Settle> to decide`,
          },
        ],
      },
    ],
  };
}

export type EmailMessage = { subject: string; text: string };

export function renderEmail(d: Digest, sentAt: Date): EmailMessage {
  const more = d.count - d.items.length;
  const first = d.items[0];
  const subject = `[Settle] ${headline(d)}${first ? `: ${nameOf(first)}` : ""}`;
  const lines = d.items.flatMap((item) => [`- ${itemLine(item, sentAt.toISOString())}`, `  ${item.link}`]);
  return {
    // One line, without anything a mail header could be split by.
    subject: subject.replace(/[\r\n]+/g, " ").slice(0, 200),
    text: [
      `${headline(d)}.`,
      "",
      ...lines,
      ...(more > 0 ? ["", `…and ${more} more.`] : []),
      "",
      `Decide in the console: ${d.queue_link}`,
      "",
      "Settle sends this because a notification channel names you (Admin → Notifications).",
    ].join("\n"),
  };
}
