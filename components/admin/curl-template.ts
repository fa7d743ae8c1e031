// The runtime-key page's curl example is made on the server (lib/first-run.ts
// owns its text) with these placeholders, and filled in the browser with its
// own origin and the key that was just created. A plain module, not a client
// one, so the server page gets the strings themselves.
export const CURL_ORIGIN = "__SETTLE_ORIGIN__";
export const CURL_KEY = "__SETTLE_KEY__";

export function fillCurl(template: string, origin: string, key: string): string {
  return template.replaceAll(CURL_ORIGIN, origin).replaceAll(CURL_KEY, key);
}
