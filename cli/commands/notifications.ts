import { ApiError } from "@/lib/errors";
import {
  createNotificationChannel,
  deleteNotificationChannel,
  listNotificationChannels,
  newNotificationChannelSchema,
} from "@/lib/notifications/channels";
import { notificationEvents } from "@/lib/notifications/events";
import { effectClasses } from "@/lib/outcome/queue-order";
import { integerOption, stringOption, type Command, type OptionValues } from "../args";
import { withDatabase } from "../database";
import { CliError, UsageError } from "../errors";
import { printLine } from "../io";
import { formatTable, shortTime } from "../table";

// `settle notifications …`: who is told when a call needs a person, as Admin → Notifications edits it;
// every change is in the audit trail with actor `cli`.

const list = (values: OptionValues, name: string) =>
  (stringOption(values, name) ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const filterOptions = {
  runtimes: { type: "string" },
  classes: { type: "string" },
  events: { type: "string" },
  digest: { type: "string" },
} as const;

const filterHelp = `  --runtimes <a,b>   only these runtimes' calls (default: every runtime)
  --classes <a,b>    only these effect classes: ${effectClasses.join(", ")} (default: all)
  --events <a,b>     only these events: ${notificationEvents.join(", ")} (default: all)
  --digest <s>       at most one message per this many seconds (default 60; 0: each call at once)`;

export const notificationsList: Command = {
  name: "notifications list",
  summary: "list notification channels (who is told when a call needs a person)",
  help: `Usage: settle notifications list [--json]

Lists every notification channel: where it sends, what it hears of, its digest
window and how its messages went.

Options:
  --json   print a JSON array instead of a table

Example:
  npm run -s settle -- notifications list`,
  options: { json: { type: "boolean" } },
  args: { min: 0, max: 0 },
  run: async ({ values }, io) => {
    const channels = await withDatabase((db) => listNotificationChannels(db));
    if (values.json) {
      printLine(io.stdout, JSON.stringify(channels, null, 2));
      return 0;
    }
    if (channels.length === 0) {
      printLine(io.stderr, "No notification channels yet. Add one with: settle notifications add slack <webhook URL>");
      return 0;
    }
    const all = (l: readonly string[]) => (l.length === 0 ? "all" : l.join(","));
    const rows = channels.map((c) => [
      c.id,
      c.kind,
      c.kind === "slack" ? (c.url ?? "") : c.to.join(","),
      `${all(c.runtimes)} / ${all(c.effect_classes)} / ${all(c.events)}`,
      `${c.digest_s}s`,
      c.enabled ? "on" : "off",
      `${c.messages.delivered} sent, ${c.messages.failed} failed`,
      c.last_message_at ? shortTime(c.last_message_at) : "-",
    ]);
    printLine(
      io.stdout,
      formatTable(["ID", "KIND", "TO", "RUNTIMES / CLASSES / EVENTS", "DIGEST", "STATE", "MESSAGES", "LAST"], rows),
    );
    return 0;
  },
};

export const notificationsAdd: Command = {
  name: "notifications add",
  summary: "add a Slack-compatible webhook or email channel",
  help: `Usage: settle notifications add slack <webhook URL> [options]
       settle notifications add email <address,address> [options]

Tells the channel when a call needs a person: a new unknown or stalled call, an
approval, an SLA escalation, a possible duplicate. Email needs SETTLE_SMTP_URL.
Prints the channel's id, then its signing secret once.

Options:
${filterHelp}

Example:
  npm run -s settle -- notifications add slack https://hooks.slack.com/services/T0/B0/x --runtimes billing-agent --classes money`,
  options: filterOptions,
  args: { min: 2, max: 2 },
  run: async ({ values, args }, io) => {
    const [kind, target] = args as [string, string];
    const filters = {
      runtimes: list(values, "runtimes"),
      effect_classes: list(values, "classes"),
      events: list(values, "events"),
      digest_s: integerOption(values, "digest", { min: 0, max: 86_400, fallback: 60 }),
    };
    const parsed = newNotificationChannelSchema.safeParse(
      kind === "email"
        ? { kind, to: target.split(",").map((s) => s.trim()), ...filters }
        : { kind, url: target, ...filters },
    );
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new UsageError(`${issue.path.join(".") || "channel"}: ${issue.message}`);
    }
    try {
      const { channel, secret } = await withDatabase((db) => createNotificationChannel(db, parsed.data, "cli"));
      printLine(io.stderr, `Added ${channel.kind} channel ${channel.id}. Its signing secret, shown once:`);
      printLine(io.stdout, secret);
      return 0;
    } catch (error) {
      if (error instanceof ApiError) throw new CliError(`${error.code}: ${error.message}`);
      throw error;
    }
  },
};

export const notificationsRemove: Command = {
  name: "notifications remove",
  summary: "delete a notification channel and its message log",
  help: `Usage: settle notifications remove <id>

Deletes the channel ('notifications list' shows ids) with its message log.

Example:
  npm run -s settle -- notifications remove 0b7c…`,
  options: {},
  args: { min: 1, max: 1 },
  run: async ({ args }, io) => {
    const [id] = args as [string];
    try {
      await withDatabase((db) => deleteNotificationChannel(db, id, "cli"));
    } catch (error) {
      if (error instanceof ApiError) throw new CliError(`${error.code}: ${error.message}`);
      throw error;
    }
    printLine(io.stdout, `Removed notification channel ${id}.`);
    return 0;
  },
};
