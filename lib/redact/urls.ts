import { REDACTED } from "./secret-patterns";

// A webhook's or a notification channel's URL is itself the credential: whoever has it can post as Settle
// (Slack's /services/T…/B…/…, Discord's /api/webhooks/<id>/<token>, Mattermost's /hooks/<key>, Teams',
// Zapier's, a `?token=` or `?code=`). People who may read the audit trail but not the admin pages see such a
// URL as its scheme, host and the plain words of its path: a path segment that looks like a key, every query
// value, a fragment and any user or password become [redacted].

/** A path segment that looks like a key rather than a word (`webhookb2`) or a number (Discord's webhook id): long, or letters mixed with digits. */
function looksLikeKey(segment: string): boolean {
  let text = segment;
  try {
    text = decodeURIComponent(segment);
  } catch {
    // An undecodable segment is judged as it is.
  }
  if (text.length >= 24) return true;
  return text.length >= 6 && /[0-9].*[0-9]/.test(text) && /[A-Za-z]/.test(text);
}

/** The URL with whatever could be its credential redacted; a text that is no http(s) URL is returned as it is. */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return raw;
  const path = url.pathname
    .split("/")
    .map((segment) => (looksLikeKey(segment) ? REDACTED : segment))
    .join("/");
  const query = [...url.searchParams.keys()].map((key) => `${encodeURIComponent(key)}=${REDACTED}`).join("&");
  const user = url.username || url.password ? `${REDACTED}@` : "";
  return `${url.protocol}//${user}${url.host}${path}${query ? `?${query}` : ""}${url.hash ? `#${REDACTED}` : ""}`;
}
