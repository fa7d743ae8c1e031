import { describe, expect, it } from "vitest";
import { defaultSummary } from "../catalog/templates";
import { isSecretKey, REDACTED, redact, redactText } from "./redact";

// The one rule set (issue 36's findings and their neighbours): every shape a secret arrived in and slipped
// past, and the ordinary shapes that must stay readable. `S` is the secret: it must never come back.

const S = "Zq7Xw2Vb9Nm4Kl1Jh6";
const nest = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { level: nest(depth - 1, leaf) });

type Shape = [kind: string, input: unknown];

const leaking: Shape[] = [
  // Name/value pairs.
  ["a header pair", { headers: [{ name: "X-Api-Key", value: S }] }],
  [
    "a Kubernetes env pair",
    {
      env: [
        { name: "DB_PASSWORD", value: S },
        { name: "PORT", value: "5432" },
      ],
    },
  ],
  ["an AWS Name/Value pair", { Environment: [{ Name: "STRIPE_SECRET_KEY", Value: S }] }],
  ["a Postman key/value pair", { query: [{ key: "access_token", value: S, disabled: false }] }],
  ["a HAR header", { request: { headers: [{ name: "Authorization", value: `Token ${S}` }] } }],
  ["a CloudFormation parameter", { Parameters: [{ ParameterKey: "DbPassword", ParameterValue: S }] }],
  ["a pair whose value is an object", { vars: [{ name: "credentials", value: { user: "a", pass: S } }] }],
  [
    "a pair list of tuples",
    {
      headers: [
        ["Authorization", `Bearer ${S}`],
        ["Accept", "application/json"],
      ],
    },
  ],
  [
    "a pair list of URL parameters",
    {
      params: [
        ["token", S],
        ["page", "2"],
      ],
    },
  ],
  ["a field/data pair", { form: [{ field: "pin", data: S }] }],
  // Keys.
  ["pwd", { host: "mail.internal", user: "bob", pwd: S }],
  ["pin", { pin: S }],
  ["otp", { otp: S }],
  ["cvc", { card: { cvc: S } }],
  ["credit_card", { credit_card: S }],
  ["Pass_Word", { Pass_Word: S }],
  ["PASS-WORD", { "PASS-WORD": S }],
  ["pass.word", { "pass.word": S }],
  ["a Cyrillic look-alike of password", { раssword: S }],
  ["a Greek omicron in password", { passwοrd: S }],
  ["fullwidth letters", { ｐａｓｓｗｏｒｄ: S }],
  ["a zero-width space inside", { "pass\u200bword": S }],
  ["a soft hyphen inside", { "api\u00adkey": S }],
  ["camel case", { userPin: S }],
  ["PIN_CODE", { PIN_CODE: S }],
  ["a number under pin", { pin: 4_821 }],
  ["x-auth-token", { "x-auth-token": S }],
  ["passcode", { passcode: S }],
  ["2fa", { "2fa": S }],
  ["cvv2", { cvv2: S }],
  ["sessionToken", { sessionToken: S }],
  ["card_no", { card_no: S }],
  ["sixty levels down", nest(60, { client_secret: S })],
  // Text.
  ["password=… in text", `login failed for password=${S} user=bob`],
  ["DB_PASSWORD=… in text", `DB_PASSWORD=${S} ./run.sh`],
  ["pwd: … in text", `user: bob\npwd: ${S}\n`],
  ["a quoted value with spaces", `export PGPASSWORD='${S} and more'`],
  ["spaces around =", `api_key = ${S}`],
  ["a command-line flag", `mysql --password=${S} orders`],
  ["a token in a URL's query", `GET https://api.example.com/v1/me?access_token=${S}&page=2`],
  ["a token inside another value's URL", `callback=https://h.example.com/x?token=${S}`],
  ["a JSON member in a log line", `sent {"user":"a","password":"${S}"} to the API`],
  ["JSON cut short", `{"items": [1], "db_password": "${S}`],
  ["a pair list inside JSON text", JSON.stringify({ headers: [{ name: "X-Api-Key", value: S }] })],
  ["a pair inside prose", `timed out: ${JSON.stringify([{ key: "password", value: S, enabled: true }])}`],
  ["a pair in JSON cut short", `{"headers": [{"name": "X-Api-Key", "value": "${S}`],
  ["a secret value under a Cyrillic key in JSON text", JSON.stringify({ раssword: S })],
  ["Authorization with a short token", { evidence: `HTTP 200; Authorization: Bearer ${S.slice(0, 6)}` }],
];

const kept: Shape[] = [
  ["shipping and spinner", { shipping: "express", spinner: "dots", opinion: "fine", pinned: true }],
  ["author, passenger and bypass", { author: "ann", passenger: "bob", bypass: false, compass: "N" }],
  ["an ordinary pair", { headers: [{ name: "Accept", value: "application/json" }] }],
  ["a pair of field names", { fields: ["password", "email"] }],
  ["a time", "due at 12:30, retry=3"],
  ["what became of a token", "token: expired; password: incorrect; authorization: denied"],
  ["an already redacted value", "password=[redacted]"],
  ["a URL without a secret", "see https://example.com/docs?page=2&sort=asc"],
];

describe("the one rule set, applied to arguments, envelopes, evidence and summaries", () => {
  it(`covers at least 40 shapes (${leaking.length} that leaked, ${kept.length} that must stay)`, () => {
    expect(leaking.length).toBeGreaterThanOrEqual(40);
  });

  it.each(leaking)("redacts %s", (_kind, input) => {
    const out = typeof input === "string" ? redactText(input) : redact(input);
    const text = JSON.stringify(out);
    expect(text).not.toContain(S.slice(0, 6));
    expect(text).toContain(REDACTED);
  });

  it.each(kept)("keeps %s", (_kind, input) => {
    expect(typeof input === "string" ? redactText(input) : redact(input)).toEqual(input);
  });

  it("keeps the name of a pair and the text around a value", () => {
    expect(redact({ env: [{ name: "DB_PASSWORD", value: S }] })).toEqual({
      env: [{ name: "DB_PASSWORD", value: REDACTED }],
    });
    expect(redactText(`DB_PASSWORD=${S} ./run.sh`)).toBe("DB_PASSWORD=[redacted] ./run.sh");
    expect(redactText(`export PGPASSWORD='${S} x'`)).toBe("export PGPASSWORD='[redacted]'");
    expect(redactText(`https://h/x?access_token=${S}&page=2`)).toBe("https://h/x?access_token=[redacted]&page=2");
    expect(redactText("request had Authorization: Bearer abc")).toBe("request had Authorization: Bearer [redacted]");
  });

  it("names secret keys as a person reads them, not by their bytes", () => {
    for (const key of ["pwd", "PIN", "otp", "CVC", "credit_card", "Pass_Word", "раssword", "ｐａｓｓ", "DbPassword"])
      expect(isSecretKey(key), key).toBe(true);
    for (const key of ["shipping", "spinner", "opinion", "author", "passenger", "compass", "keyboard", "amount"])
      expect(isSecretKey(key), key).toBe(false);
  });

  it("never puts a secret-looking argument in the automatic summary, redacted or not", () => {
    const args = redact({ host: "mail.internal", user: "bob", pwd: "hunter2", to: "ann@example.com" });
    expect(defaultSummary(args)).toBe("host mail.internal · user bob · to ann@example.com");
    expect(defaultSummary({ password: REDACTED, token: REDACTED })).toBeNull();
  });
});
