import "server-only";
import { env } from "../env";
import { readAtMost } from "../webhooks/answer";
import { pinnedPost } from "../webhooks/pinned-post";
import { checkWebhookUrl } from "../webhooks/safe-url";

// The few Slack calls Settle makes, as plain JSON POSTs: the Web API (chat.postMessage, chat.update,
// views.open) at the app's api_base_url with the bot token, and a click's response_url. Each goes to the
// address checked as every webhook's is (public only unless SETTLE_WEBHOOK_ALLOW_PRIVATE=1, connected to
// exactly the address checked), with a timeout and a bounded answer. No SDK: @slack/web-api retries on its
// own for minutes, while a notification message already has the outbox's retries and a click's answer is
// worth nothing late (decision 042).

const ANSWER_BYTES = 64 * 1024;
/** A click's answer is worth nothing after Slack's own patience; the outbox gives messages their own. */
const TIMEOUT_MS = 5_000;

export type SlackAnswer = { ok: boolean; status: number | null; error: string | null; body: Record<string, unknown> };

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<SlackAnswer> {
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  const target = await checkWebhookUrl(url, { allowPrivate: env().SETTLE_WEBHOOK_ALLOW_PRIVATE });
  if (!target.ok) return { ok: false, status: null, error: `refused: the URL ${target.message}`, body: {} };
  try {
    const res = await pinnedPost(url, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", "user-agent": "Settle-Slack/1", ...headers },
      body: JSON.stringify(body),
      redirect: "manual",
      signal,
      address: target.addresses[0]!,
    });
    const text = res.body ? new TextDecoder().decode(await readAtMost(res.body, ANSWER_BYTES)) : "";
    let parsed: Record<string, unknown> = {};
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === "object" && !Array.isArray(value)) parsed = value as Record<string, unknown>;
    } catch {
      // response_url answers "ok" as text; the Web API always answers JSON.
    }
    const httpOk = res.status >= 200 && res.status < 300;
    // The Web API says whether it worked in `ok` (HTTP 200 either way); a response_url in its status.
    const ok = httpOk && (parsed.ok === undefined || parsed.ok === true);
    const error = ok ? null : typeof parsed.error === "string" ? parsed.error : `HTTP ${res.status}`;
    return { ok, status: res.status, error, body: parsed };
  } catch (error) {
    return { ok: false, status: null, error: error instanceof Error ? error.message : String(error), body: {} };
  }
}

export type SlackWebApi = { apiBaseUrl: string; botToken: string };

/** One Web API method (chat.postMessage, chat.update, views.open) with the bot token. */
export function callSlackApi(app: SlackWebApi, method: string, body: Record<string, unknown>): Promise<SlackAnswer> {
  return postJson(`${app.apiBaseUrl}/${method}`, body, { authorization: `Bearer ${app.botToken}` });
}

/** A click's response_url: replaces the message, or answers only the person who clicked (ephemeral). */
export function postToResponseUrl(url: string, body: Record<string, unknown>): Promise<SlackAnswer> {
  return postJson(url, body);
}
