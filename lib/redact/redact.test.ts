import { describe, expect, it } from "vitest";
import { normalizeEnvelope } from "../ingest/normalize";
import { cleanText, MAX_DEPTH, MAX_JSON_TEXT, REDACTED, redact, redactText, TooDeepError } from "./redact";

// Fake credentials, built from parts so that no secret scanner takes this file for a leak.
const rand = (n: number) => "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7cF0".repeat(10).slice(0, n);
const upper = (n: number) => "Q7W3E9R2T5Y8U1I4O6P0ASDFGHJKLZ".repeat(4).slice(0, n);
const sk = (rest: string) => `sk-${rest}`;
const openaiKey = sk(rand(48));
const pem = ["-----BEGIN RSA PRIVATE KEY-----", rand(64), rand(64), "-----END RSA PRIVATE KEY-----"].join("\n");

describe("redaction", () => {
  it.each([
    ["token", "t0k"],
    ["access_token", "t0k"],
    ["client_secret", "s"],
    ["password", "hunter2"],
    ["Authorization", "Bearer abc"],
    ["api_key", "sk-1"],
    ["x-api-key", "sk-1"],
    ["apiKey", "sk-1"],
    ["cookie", "sid=1"],
    ["Set-Cookie", "sid=1"],
    ["credentials", { user: "a" }],
    ["private_key", "-----BEGIN"],
    ["session_id", "abc"],
  ])("replaces the value under %s", (key, value) => {
    expect(redact({ [key]: value })).toEqual({ [key]: REDACTED });
  });

  it("keeps ordinary keys, walks nested objects and arrays, and leaves the input untouched", () => {
    const input = {
      field: "amount",
      nested: [{ password: "p", keep: 1 }],
      deeper: { a: { secret: "s", b: [true, null] } },
    };
    const out = redact(input);
    expect(out).toEqual({
      field: "amount",
      nested: [{ password: REDACTED, keep: 1 }],
      deeper: { a: { secret: REDACTED, b: [true, null] } },
    });
    expect(input.nested[0]!.password).toBe("p");
  });

  it("redacts bearer credentials wherever they appear as a value", () => {
    expect(redact({ header: "Bearer eyJhbGciOi", note: "the bearer of bad news" })).toEqual({
      header: REDACTED,
      note: "the bearer of bad news",
    });
  });

  it("keeps empty and null secrets as they are, so their absence stays visible", () => {
    expect(redact({ token: null, password: "" })).toEqual({ token: null, password: "" });
  });

  it("replaces NUL and lone surrogates, which PostgreSQL cannot store", () => {
    expect(cleanText("a\u0000b")).toBe("a\uFFFDb");
    expect(cleanText("x\uD800y")).toBe("x\uFFFDy");
    expect(redact({ "k\u0000": "v\u0000" })).toEqual({ "k\uFFFD": "v\uFFFD" });
  });

  it("refuses nesting deeper than the limit", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < MAX_DEPTH + 2; i += 1) deep = [deep];
    expect(() => redact(deep)).toThrow(TooDeepError);
  });
});

describe("credentials inside free text", () => {
  it.each([
    ["OpenAI key", `the key ${openaiKey} was rejected`, "the key [redacted] was rejected"],
    ["OpenAI project key", `401 for ${sk(`proj-${rand(20)}_${rand(40)}`)}.`, "401 for [redacted]."],
    ["Anthropic key", `x-api-key ${sk(`ant-api03-${rand(80)}-${rand(6)}AA`)} invalid`, "x-api-key [redacted] invalid"],
    ["Stripe secret key", `charged with ${"sk_" + "live_"}${rand(24)}`, "charged with [redacted]"],
    ["Stripe test key", `key=${"sk_" + "test_"}${rand(24)};`, "key=[redacted];"],
    ["Stripe restricted key", `(${"rk_" + "live_"}${rand(24)})`, "([redacted])"],
    ["GitHub classic token", `push with ${"ghp_"}${rand(36)} failed`, "push with [redacted] failed"],
    ["GitHub OAuth token", `${"gho_"}${rand(36)} expired`, "[redacted] expired"],
    ["GitHub user-to-server token", `token ${"ghu_"}${rand(36)}`, "token [redacted]"],
    ["GitHub server-to-server token", `token ${"ghs_"}${rand(36)}`, "token [redacted]"],
    ["GitHub refresh token", `token ${"ghr_"}${rand(36)}`, "token [redacted]"],
    ["GitHub fine-grained token", `using ${"github_" + "pat_"}${rand(22)}_${rand(59)} now`, "using [redacted] now"],
    ["Slack bot token", `bot ${"xoxb-"}123456789012-1234567890123-${rand(24)} ok`, "bot [redacted] ok"],
    ["Slack user token", `user ${"xoxp-"}123456789012-1234567890123-${rand(24)}`, "user [redacted]"],
    ["Slack app token", `${"xoxa-"}2-${rand(30)} revoked`, "[redacted] revoked"],
    ["Slack refresh token", `${"xoxr-"}${rand(30)} revoked`, "[redacted] revoked"],
    ["Slack session token", `${"xoxs-"}${rand(30)} revoked`, "[redacted] revoked"],
    [
      "Slack webhook URL",
      `posting to https://hooks.slack.com/services/T0000/B0000/${rand(24)} failed`,
      "posting to https://hooks.slack.com/services/[redacted] failed",
    ],
    ["AWS access key id", `signed by ${"AKIA"}${upper(16)}.`, "signed by [redacted]."],
    ["AWS temporary access key id", `signed by ${"ASIA"}${upper(16)}.`, "signed by [redacted]."],
    [
      "AWS secret access key",
      `env: aws_secret_access_key=${rand(40)} region=eu`,
      "env: aws_secret_access_key=[redacted] region=eu",
    ],
    [
      "AWS secret access key, upper case",
      `AWS_SECRET_ACCESS_KEY: "${rand(40)}"`,
      'AWS_SECRET_ACCESS_KEY: "[redacted]"',
    ],
    ["Google API key", `maps key ${"AIza"}${rand(35)} denied`, "maps key [redacted] denied"],
    [
      "JWT",
      `session ${"eyJ"}hbGciOiJIUzI1NiJ9.${"eyJ"}zdWIiOiIxMjM0In0.${rand(43)} expired`,
      "session [redacted] expired",
    ],
    ["PEM private key block", `the key:\n${pem}\nwas uploaded`, "the key:\n[redacted]\nwas uploaded"],
    ["PEM private key cut before its end", `key -----BEGIN PRIVATE KEY-----\n${rand(64)}…`, "key [redacted]"],
    [
      "password in a URL",
      "connect postgres://app:s3cret@db.internal:5432/orders failed",
      "connect postgres://app:[redacted]@db.internal:5432/orders failed",
    ],
    [
      "password in a URL without a user",
      "redis://:hunter2@cache:6379 refused",
      "redis://:[redacted]@cache:6379 refused",
    ],
    [
      "Bearer credential inside text",
      `retried with Bearer ${rand(20)} and got 401`,
      "retried with Bearer [redacted] and got 401",
    ],
    ["Basic credential inside text", "proxy sent Basic dXNlcjpwYXNz upstream", "proxy sent Basic [redacted] upstream"],
    [
      "Authorization header in a log line",
      "request had Authorization: Bearer abc",
      "request had Authorization: Bearer [redacted]",
    ],
    [
      "Settle runtime key",
      `ingest with stl_rk_ab12cd34_${rand(32)} failed`,
      "ingest with stl_rk_ab12cd34_[redacted] failed",
    ],
    ["Settle personal access token", `stl_pat_0a1b2c3d_${rand(32)}`, "stl_pat_0a1b2c3d_[redacted]"],
  ])("%s", (_kind, text, expected) => {
    expect(redactText(text)).toBe(expected);
    expect(redact({ note: text })).toEqual({ note: expected });
  });

  it("replaces every credential of a text, and a whole header value whole", () => {
    expect(redactText(`a ${openaiKey} b ${"ghp_"}${rand(36)} c`)).toBe("a [redacted] b [redacted] c");
    expect(redactText("Bearer abc")).toBe(REDACTED);
    expect(redactText("  basic dXNlcjpwYXNz ")).toBe(REDACTED);
  });

  it.each([
    ["a word that starts like a key", "the skeleton crew skipped it"],
    ["the prefix alone", "keys start with sk- and are long"],
    ["a hyphenated word after sk-", "sk-learn-compatible-estimator-wrapper"],
    ["sk- inside a word", `task-${rand(30)}`],
    ["a git sha", "fixed in 3f786850e387550fdab836ed7e6dc881de23001b"],
    ["a UUID", "invocation 550e8400-e29b-41d4-a716-446655440000 stalled"],
    ["a URL without a password", "see https://example.com:8443/docs/errors?code=42#retry"],
    ["a URL with a user only", "cloned ssh://git@github.com/acme/repo.git"],
    ["an email address", "mailto:ops@example.com or ops@example.com"],
    ["ghp without an underscore", `ghp${rand(36)} ghp-${rand(36)}`],
    ["a short ghp_", "ghp_short"],
    ["a Stripe publishable key", `pk_live_${rand(24)} and pk_test_${rand(24)}`],
    ["an AKIA that is too short", `AKIA${upper(15)} `],
    ["an AKIA inside a longer word", `XAKIA${upper(16)}`],
    ["a place in Asia", "Asia/Tokyo"],
    ["eyJ without the segments", "eyJhbGciOiJIUzI1NiJ9 alone"],
    ["bearer as a word", "the bearer of bad news"],
    ["basic as a word", "Basic plan exceeded; basic authentication disabled"],
    ["an authorization that is no credential", "authorization: denied"],
    ["a certificate, which is public", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"],
    ["a Settle key's visible prefix", "revoked stl_rk_ab12cd34"],
    ["an ordinary slack URL", "https://acme.slack.com/archives/C123"],
  ])("leaves %s alone", (_kind, text) => {
    expect(redactText(text)).toBe(text);
  });

  it("stays linear on a megabyte of near-misses", () => {
    const mb = (unit: string) => unit.repeat(Math.ceil(2 ** 20 / unit.length));
    const nearMisses = [
      "a",
      "sk-",
      "sk-abc1 ",
      "://a:",
      "://u:p",
      "Bearer ",
      "authorization: ",
      "eyJaaaa.",
      "-----BEGIN ",
      "AKIA",
      "ghp_",
      "xoxb",
      "aws_secret_access_key=",
      "stl_rk_",
      "AIza",
      "skeleton basic bearer ",
      "-----BEGIN PRIVATE KEY----- -----END ",
      "eyJ-",
      "eyJa.eyJ-",
      "AIza-",
    ].map(mb);
    // JSON-looking text that does not parse: unclosed strings, keys without values.
    nearMisses.push(`["${mb('\\"')}`, `{"token${mb("a\\")}`, `{${mb('"token": ')}`, `{${mb('"a":"b", ')}`);
    // The `key=value`, pair and embedded-JSON rules' near-misses: names without values, values without ends.
    // A quarter of a megabyte each: quadratic time would still take minutes.
    const quarter = (unit: string) => unit.repeat(Math.ceil(2 ** 18 / unit.length));
    nearMisses.push(
      ...[
        "password=",
        "a:",
        "pwd: '",
        'x: "',
        "p_a_s_s_w_o_r_d",
        '"name": "password", ',
        '"name":"x","',
        "note: {",
      ].map(quarter),
      `${"x".repeat(70)}=`.repeat(2 ** 12),
      `say ${quarter("{")}${quarter("]")}`,
    );
    // CPU time, not the wall clock: what this costs, not how busy the machine is.
    const started = process.cpuUsage();
    for (const text of nearMisses) redactText(text);
    expect(redactText(`x://${mb("a:")}@host`) === "x://a:[redacted]@host").toBe(true);
    const spent = process.cpuUsage(started);
    // Quadratic backtracking on any of these would take minutes. Process CPU time counts every thread of the test
    // worker (GC included), so the bound leaves room; the wall-clock timeout is wide because CI beside a busy
    // machine took 6.9 s of wall time for this work and vitest's default 5 s failed it.
    expect((spent.user + spent.system) / 1000).toBeLessThan(10_000);
  }, 60_000);
});

describe("JSON inside text", () => {
  const mcp = (text: string) => ({ content: [{ type: "text", text }], isError: true });

  it("redacts an MCP text part holding JSON as JSON, by key", () => {
    const out = redact(mcp(`{"api_key":"${openaiKey}"}`)) as ReturnType<typeof mcp>;
    expect(out.content[0]!.text).toBe('{"api_key":"[redacted]"}');
  });

  it("redacts credentials in its values, arrays, nested JSON texts and escaped keys", () => {
    expect(redactText(`{"note":"use ${openaiKey} here","n":1}`)).toBe('{"note":"use [redacted] here","n":1}');
    expect(redactText(' [{"password":"hunter2"}, {"keep":true}]')).toBe('[{"password":"[redacted]"},{"keep":true}]');
    expect(redactText(JSON.stringify({ inner: JSON.stringify({ token: "t0k" }) }))).toBe(
      JSON.stringify({ inner: '{"token":"[redacted]"}' }),
    );
    expect(redactText('{"\\u0074oken":"t0k"}')).toBe('{"token":"[redacted]"}');
  });

  it("keeps a JSON text with nothing to redact byte for byte", () => {
    const pretty = JSON.stringify(
      { type: "https://errors.example.com/x", title: "Too Many Requests", status: 429, tokens_left: null },
      null,
      2,
    );
    expect(redactText(pretty)).toBe(pretty);
    const escaped = '{ "detail": "line\\none \\u00e9", "b": [1, 2] }';
    expect(redactText(escaped)).toBe(escaped);
  });

  it("reads text that is not JSON, too deep or too long as text, never refusing it", () => {
    expect(redactText(`{not json, but ${openaiKey}}`)).toBe("{not json, but [redacted]}");
    const deep = `${"[".repeat(MAX_DEPTH + 5)}"${openaiKey}"${"]".repeat(MAX_DEPTH + 5)}`;
    expect(redactText(deep)).toBe(deep.replace(openaiKey, REDACTED));
    const pad = "x".repeat(MAX_JSON_TEXT);
    expect(redactText(JSON.stringify({ password: "hunter2", note: openaiKey, pad }))).toBe(
      JSON.stringify({ password: REDACTED, note: REDACTED, pad }),
    );
  });

  it("reads the members of JSON cut short, textually", () => {
    const cut =
      '{"items": [1, 2], "api_key" : "abc\\"def", "pass\\u0077ord": 1234, "token": null, "ok": "fine", "detail": "a pass';
    expect(redactText(cut)).toBe(
      '{"items": [1, 2], "api_key" : "[redacted]", "pass\\u0077ord": "[redacted]", "token": null, "ok": "fine", "detail": "a pass',
    );
  });

  it("returns a clean envelope as it is, without copying", () => {
    const envelope = mcp(
      JSON.stringify({ type: "https://example.com/probs/x", title: "Declined", status: 402, detail: "card declined" }),
    );
    expect(redact(envelope)).toBe(envelope);
  });
});

describe("fields read from text parts", () => {
  const at = "2026-11-29T05:12:04.000Z";
  const read = (envelope: unknown) => normalizeEnvelope(envelope, { isWrite: true, at });

  it("derive agent_message from the redacted text of MCP, Anthropic and OpenAI parts", () => {
    expect(read({ content: [{ type: "text", text: `{"api_key":"${openaiKey}"}` }], isError: true }).agent_message).toBe(
      '{"api_key":"[redacted]"}',
    );
    const anthropic = read({
      type: "tool_result",
      tool_use_id: "toolu_1",
      is_error: true,
      content: [{ type: "text", text: `upstream 401 for Bearer ${rand(24)}` }],
    });
    expect(anthropic).toMatchObject({ dialect: "anthropic", agent_message: "upstream 401 for Bearer [redacted]" });
    const openai = read({
      type: "function_call_output",
      call_id: "call_1",
      output: `db at postgres://app:s3cret@db:5432 down`,
    });
    expect(openai.agent_message).toBe("db at postgres://app:[redacted]@db:5432 down");
  });

  it("read an inner envelope from the redacted text, so its messages and details carry no secret", () => {
    const inner = {
      ok: false,
      commit_state: "unknown",
      code: "OUTCOME_UNKNOWN",
      agent_message: `retry with ${openaiKey}`,
      safe_details: { field: "x", note: `${"ghp_"}${rand(36)}` },
      items: [{ id: "1", applied: "unknown", reason: "Basic dXNlcjpwYXNz refused" }],
    };
    const n = read({ content: [{ type: "text", text: JSON.stringify(inner) }], isError: true });
    expect(n).toMatchObject({
      dialect: "settle",
      wrapper_dialect: "mcp",
      commit_state: "unknown",
      agent_message: "retry with [redacted]",
      safe_details: { field: "x", note: REDACTED },
    });
    expect(n.items[0]!.reason).toBe("Basic [redacted] refused");
  });

  it("redact a long JSON text part before it is cut to a message", () => {
    const n = read({
      content: [{ type: "text", text: JSON.stringify({ password: "hunter2", pad: "x".repeat(5000) }) }],
      isError: true,
    });
    expect(n.agent_message).toMatch(/^\{"password":"\[redacted\]","pad":"x+…$/);
  });

  it("catch a credential split across two text parts", () => {
    const n = read({
      content: [
        { type: "text", text: "sent Bearer" },
        { type: "text", text: rand(24) },
      ],
      isError: true,
    });
    expect(n.agent_message).toBe("sent Bearer\n[redacted]");
  });
});
