import "server-only";
import { z } from "zod";
import { ApiError } from "../errors";
import type { Db } from "../db/client";
import type { Sql } from "../db/driver";
import { recordAdminAction } from "../audit/admin";
import { env, publicUrl } from "../env";
import { checkWebhookUrl, type LookupFn } from "../webhooks/safe-url";
import { SLACK_WEB_API } from "./manifest";
import { openSecret, sealSecret } from "./secret-box";
import {
  mergeSlackActionPolicy,
  readSlackActionPolicy,
  slackActionPolicySchema,
  slackActions,
  slackPolicyClasses,
  type SlackActionPolicy,
} from "./policy";

// The Slack app's settings: one row, changed by admins, every change audited (never the secrets themselves).
// The signing secret and bot token are answered never: GET says only whether they are set.

export const SLACK_API_BASE_URL = SLACK_WEB_API;
export const INTERACTIONS_PATH = "/api/v1/integrations/slack/interactions";
export const COMMANDS_PATH = "/api/v1/integrations/slack/commands";

const secretText = (what: string) => z.string().trim().min(8, `${what} looks too short`).max(512);

export const slackSettingsInputSchema = z
  .object({
    signing_secret: secretText("the signing secret")
      .optional()
      .describe(
        "The app's Signing Secret (Basic Information → App Credentials). Needed the first time; left out, kept.",
      ),
    bot_token: secretText("the bot token")
      .regex(/^xoxb-/, "a bot token starts with xoxb-")
      .optional()
      .describe("The Bot User OAuth Token (xoxb-…). Needed the first time; left out, kept."),
    api_base_url: z
      .string()
      .trim()
      .max(2000)
      .pipe(z.url({ protocol: /^https?$/, error: "an http:// or https:// URL" }))
      .optional()
      .describe(`Slack's Web API (${SLACK_API_BASE_URL}, the default) or a Slack-compatible server's.`),
    actions: slackActionPolicySchema.optional(),
  })
  .meta({ id: "SlackSettingsInput" });
export type SlackSettingsInput = z.infer<typeof slackSettingsInputSchema>;

const time = z.string().meta({ format: "date-time" });

export const slackSettingsSchema = z
  .object({
    configured: z.boolean().describe("Whether the signing secret and bot token are set and readable."),
    signing_secret_set: z.boolean().describe("Whether a signing secret is stored and readable (never the secret)."),
    signing_secret_changed_at: time.nullable().describe("When the signing secret was last replaced."),
    bot_token_set: z.boolean().describe("Whether a bot token is stored and readable (never the token)."),
    bot_token_changed_at: time.nullable().describe("When the bot token was last replaced."),
    interactivity_url: z.string().describe("Paste into the app's Interactivity & Shortcuts → Request URL."),
    slash_command_url: z.string().describe("The Request URL of the app's /settle slash command (Slash Commands)."),
    api_base_url: z.string(),
    actions: z
      .record(z.enum(slackPolicyClasses), z.array(z.enum(slackActions)))
      .describe("Per effect class, what may be done from a Slack message."),
    updated_by: z.string().nullable(),
    updated_at: time.nullable(),
  })
  .meta({ id: "SlackSettings" });
export type SlackSettingsView = z.infer<typeof slackSettingsSchema>;

/** What the interactivity endpoint and the channel sender need: the secrets opened. */
export type SlackApp = { signingSecret: string; botToken: string; apiBaseUrl: string; actions: SlackActionPolicy };

type Row = {
  signing_secret: string;
  bot_token: string;
  api_base_url: string;
  actions: unknown;
  updated_by: string;
  updated_at: Date | string;
  signing_secret_changed_at: Date | string | null;
  bot_token_changed_at: Date | string | null;
};

const SELECT = `SELECT signing_secret, bot_token, api_base_url, actions, updated_by, updated_at,
                       signing_secret_changed_at, bot_token_changed_at
                  FROM slack_settings WHERE id = 1`;

async function selectRow(q: Sql): Promise<Row | null> {
  return (await q.query<Row>(SELECT))[0] ?? null;
}

const isoOrNull = (at: Date | string | null | undefined) => (at ? new Date(at).toISOString() : null);

function viewOf(row: Row | null): SlackSettingsView {
  const signingSecretSet = row !== null && openSecret(row.signing_secret) !== null;
  const botTokenSet = row !== null && openSecret(row.bot_token) !== null;
  return {
    configured: signingSecretSet && botTokenSet,
    signing_secret_set: signingSecretSet,
    signing_secret_changed_at: isoOrNull(row?.signing_secret_changed_at),
    bot_token_set: botTokenSet,
    bot_token_changed_at: isoOrNull(row?.bot_token_changed_at),
    interactivity_url: `${publicUrl()}${INTERACTIONS_PATH}`,
    slash_command_url: `${publicUrl()}${COMMANDS_PATH}`,
    api_base_url: row?.api_base_url ?? SLACK_API_BASE_URL,
    actions: readSlackActionPolicy(row?.actions),
    updated_by: row?.updated_by ?? null,
    updated_at: isoOrNull(row?.updated_at),
  };
}

export async function getSlackSettings(db: Db): Promise<SlackSettingsView> {
  return viewOf(await selectRow(db.driver));
}

/** The app with its secrets, or null when it is not set up (or its secrets cannot be opened). */
export async function loadSlackApp(db: Db): Promise<SlackApp | null> {
  const row = await selectRow(db.driver);
  if (!row) return null;
  const signingSecret = openSecret(row.signing_secret);
  const botToken = openSecret(row.bot_token);
  if (signingSecret === null || botToken === null) return null;
  return { signingSecret, botToken, apiBaseUrl: row.api_base_url, actions: readSlackActionPolicy(row.actions) };
}

/** What the audit keeps: never a secret, only whether one changed. */
const snapshotOf = (v: SlackSettingsView, secretsChanged?: string[]) => ({
  api_base_url: v.api_base_url,
  actions: v.actions,
  ...(secretsChanged ? { replaced: secretsChanged } : {}),
});

export async function setSlackSettings(
  db: Db,
  input: SlackSettingsInput,
  actor: string,
  options: { lookup?: LookupFn } = {},
): Promise<SlackSettingsView> {
  if (input.api_base_url !== undefined) {
    const check = await checkWebhookUrl(input.api_base_url, {
      allowPrivate: env().SETTLE_WEBHOOK_ALLOW_PRIVATE,
      lookup: options.lookup,
    });
    if (!check.ok)
      throw new ApiError("UNSAFE_URL", `The API base URL ${check.message}.`, {
        field: "api_base_url",
        rule: check.rule,
      });
  }
  await db.driver.transaction(async (tx) => {
    const row = (await tx.query<Row>(`${SELECT} FOR UPDATE`))[0] ?? null;
    if (!row && (!input.signing_secret || !input.bot_token))
      throw new ApiError("INVALID_REQUEST", "The first time, send both signing_secret and bot_token.", {
        path: input.signing_secret ? "bot_token" : "signing_secret",
      });
    const before = viewOf(row);
    const actions = mergeSlackActionPolicy(before.actions, input.actions);
    const values = [
      input.signing_secret ? sealSecret(input.signing_secret) : row!.signing_secret,
      input.bot_token ? sealSecret(input.bot_token) : row!.bot_token,
      (input.api_base_url ?? before.api_base_url).replace(/\/+$/, ""),
      JSON.stringify(actions),
      actor,
    ];
    // A secret's time moves only when that secret is sent ($6, $7), so the page can say which changed when.
    await tx.query(
      `INSERT INTO slack_settings (id, signing_secret, bot_token, api_base_url, actions, updated_by, updated_at,
                                   signing_secret_changed_at, bot_token_changed_at)
       VALUES (1, $1, $2, $3, $4::jsonb, $5, now(), now(), now())
       ON CONFLICT (id) DO UPDATE SET signing_secret = $1, bot_token = $2, api_base_url = $3, actions = $4::jsonb,
              updated_by = $5, updated_at = now(),
              signing_secret_changed_at = CASE WHEN $6::boolean THEN now() ELSE slack_settings.signing_secret_changed_at END,
              bot_token_changed_at = CASE WHEN $7::boolean THEN now() ELSE slack_settings.bot_token_changed_at END`,
      [...values, Boolean(input.signing_secret), Boolean(input.bot_token)],
    );
    const after = viewOf(await selectRow(tx));
    const changed = [input.signing_secret && "signing secret", input.bot_token && "bot token"].filter(
      (s): s is string => typeof s === "string",
    );
    await recordAdminAction(tx, {
      actor,
      action: "slack_settings_changed",
      targetType: "slack_settings",
      targetId: "slack",
      before: row ? snapshotOf(before) : null,
      after: snapshotOf(after, changed),
    });
  });
  return getSlackSettings(db);
}
