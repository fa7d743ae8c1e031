import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type APIResponse, type Page } from "@playwright/test";
import { OUT_DIR, readState } from "./server";
import { signIn } from "./sign-in";

// The console under its strict, nonce-based Content-Security-Policy: every
// page works with no violation, it cannot be framed by another origin, and
// pages, the API and static files carry the security headers.

const state = readState().console;
const base = state.baseURL;
const run = randomBytes(3).toString("hex");

type Violation = { directive: string; blocked: string; source: string; sample: string; page: string };

/** Records every CSP violation (from the page's own event) and every console error, across navigations. */
async function watch(page: Page) {
  const violations: Violation[] = [];
  const consoleErrors: string[] = [];
  await page.exposeBinding("__settleCspViolation", (_source, v: Violation) => void violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      const report = {
        directive: e.effectiveDirective,
        blocked: e.blockedURI,
        source: `${e.sourceFile}:${e.lineNumber}`,
        sample: e.sample,
        page: location.href,
      };
      (window as unknown as { __settleCspViolation: (v: Violation) => void }).__settleCspViolation(report);
    });
  });
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  page.on("pageerror", (e) => consoleErrors.push(`uncaught: ${e.message}`));
  return {
    violations,
    consoleErrors,
    cspErrors: () =>
      consoleErrors.filter((t) =>
        /Content Security Policy|Refused to (load|execute|apply|frame|evaluate|connect)/i.test(t),
      ),
  };
}

/** An invocation whose create_order call timed out, on the billing-agent runtime (so its page has a timeline). */
async function unknownInvocation(page: Page): Promise<string> {
  const id = `csp-${run}`;
  const started = Date.now() - 60_000;
  const r = {
    task_id: `ord-${id}`,
    invocation_id: id,
    tool: "create_order",
    effect_class: "create",
    idempotency_key: `key-${id}`,
  };
  const res = await page.request.post(`${base}/api/v1/envelopes`, {
    headers: { authorization: `Bearer ${state.key}` },
    data: {
      records: [
        { ...r, event_id: `${id}-i1`, attempt: 1, phase: "intent", at: new Date(started).toISOString() },
        {
          ...r,
          event_id: `${id}-o1`,
          attempt: 1,
          at: new Date(started + 8000).toISOString(),
          envelope: { content: [{ type: "text", text: "upstream timed out" }], isError: true },
        },
      ],
    },
  });
  expect(res.status()).toBe(207);
  return id;
}

/** Styles and the web font were applied: Tailwind's classes took effect and Inter loaded. */
async function expectStyled(page: Page) {
  await page.evaluate(() => document.fonts.ready);
  const styled = await page.evaluate(() => ({
    sheets: document.styleSheets.length,
    bodyBackground: getComputedStyle(document.body).backgroundColor,
    fontsLoaded: [...document.fonts].filter((f) => f.status === "loaded").length,
  }));
  expect(styled.sheets).toBeGreaterThan(0);
  expect(styled.bodyBackground).not.toMatch(/^(rgba\(0, 0, 0, 0\)|transparent)$/);
  expect(styled.fontsLoaded).toBeGreaterThan(0);
}

test("the console works under the CSP: sign in, queue, an invocation, metrics, audit and admin, with dialogs, and no violation", async ({
  page,
}) => {
  const seen = await watch(page);
  const id = await unknownInvocation(page);
  // Searched for, so other specs' invocations do not push it off the first page.
  await signIn(page, base, state.adminEmail, state.adminPassword, `/?q=${encodeURIComponent(id)}`);

  // The queue, with the invocation in it.
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
  await expect(page.getByTestId("invocation-row").filter({ hasText: id })).toBeVisible();
  await expectStyled(page);
  await page.screenshot({ path: `${OUT_DIR}/screenshots/csp-queue.png` });
  // A Radix dialog (the keyboard help): its portal, focus trap and scroll lock all run under the CSP.
  await page.getByRole("button", { name: /^Keyboard/ }).click();
  await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);

  // Client-side navigation (scripts loaded by Next.js's runtime, trusted through 'strict-dynamic').
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click();
  await expect(page.getByRole("heading", { name: "Audit trail" })).toBeVisible();

  // The invocation page: its timeline places every mark with a server-rendered style attribute.
  await page.goto(`${base}/invocations/${encodeURIComponent(id)}?runtime=billing-agent`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Outcome unknown");
  const mark = page.locator(".tl-mark").first();
  await expect(mark).toBeVisible();
  expect(
    await mark.evaluate((el) => ({ attr: el.getAttribute("style") ?? "", applied: (el as HTMLElement).style.left })),
  ).toMatchObject({ attr: expect.stringContaining("left"), applied: expect.stringMatching(/%$/) });
  await page.keyboard.press("?");
  await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeVisible();
  await page.keyboard.press("Escape");

  await page.goto(`${base}/metrics`);
  await expect(page.getByRole("heading", { name: "Trust metrics" })).toBeVisible();
  await page.goto(`${base}/audit`);
  await expect(page.getByRole("heading", { name: "Audit trail" })).toBeVisible();
  await page.goto(`${base}/admin/policies`);
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();

  // Admin: open the "Add a person" form and close it again.
  await page.goto(`${base}/admin/users`);
  await expect(page.getByRole("heading", { name: "Users" })).toBeVisible();
  await page.getByRole("button", { name: "Add person" }).click();
  const form = page.getByRole("dialog", { name: "Add a person" });
  await expect(form).toBeVisible();
  await form.getByLabel("Email").fill(`csp-${run}@example.com`);
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  await page.goto(`${base}/admin/keys`);
  await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();

  // Let late events (fonts, deferred chunks) arrive before judging.
  await page.waitForTimeout(500);
  expect(seen.violations, JSON.stringify(seen.violations, null, 2)).toEqual([]);
  expect(seen.cspErrors(), seen.consoleErrors.join("\n")).toEqual([]);
});

test("a page that does not exist renders per request, so its scripts carry the nonce", async ({ page }) => {
  const seen = await watch(page);
  const res = await page.goto(`${base}/no-such-page-${run}`);
  expect(res?.status()).toBe(404);
  expect(res?.headers()["content-security-policy"]).toMatch(/script-src 'self' 'nonce-[^']+' 'strict-dynamic'/);
  await expect(page.getByText(/could not be found/i)).toBeVisible();
  await page.waitForTimeout(500);
  // Settle's own app/not-found.tsx: Next.js's built-in 404 would write a <style> without the nonce.
  expect(seen.violations, JSON.stringify(seen.violations, null, 2)).toEqual([]);
});

test("another origin cannot frame the console, signed in or not", async ({ page }) => {
  await signIn(page, base, state.adminEmail, state.adminPassword);
  const seen = await watch(page);
  // A page on another origin (another port) that frames the console, a console API URL and, as a control, itself.
  const attacker = http.createServer((req, res) => {
    res.setHeader("content-type", "text/html; charset=utf-8");
    if (req.url === "/framed") return res.end("<!doctype html><p id=ok>framable</p>");
    res.end(`<!doctype html><h1>Win a prize</h1>
      <iframe name="console" src="${base}/" width="800" height="400"></iframe>
      <iframe name="sign-in" src="${base}/sign-in" width="800" height="400"></iframe>
      <iframe name="api" src="${base}/api/health" width="800" height="100"></iframe>
      <iframe name="control" src="/framed" width="200" height="100"></iframe>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  try {
    await page.goto(`${origin}/`);
    // The control frame loads: framing as such works in this browser.
    await expect(page.frameLocator("iframe[name=control]").locator("#ok")).toHaveText("framable");
    for (const name of ["console", "sign-in", "api"]) {
      await expect
        .poll(() => page.frame({ name })?.url() ?? "", { message: `frame ${name}` })
        .toMatch(/^chrome-error:/);
      const frame = page.frame({ name })!;
      expect(frame.url().startsWith(base)).toBe(false);
      // Nothing of the console is inside.
      expect(
        await frame
          .locator("nav, form, button")
          .count()
          .catch(() => 0),
      ).toBe(0);
    }
    // The browser says why: the console's frame-ancestors 'none' (X-Frame-Options: DENY says the same to older browsers).
    await expect
      .poll(() => seen.consoleErrors.filter((t) => /frame-ancestors|X-Frame-Options/.test(t)).length)
      .toBeGreaterThanOrEqual(3);
  } finally {
    await new Promise((resolve) => attacker.close(resolve));
  }
});

const staticHeaders = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
};

function expectStaticHeaders(res: APIResponse, what: string) {
  const headers = res.headers();
  for (const [key, value] of Object.entries(staticHeaders)) expect(headers[key], `${what}: ${key}`).toBe(value);
  // Served over http: no HSTS.
  expect(headers["strict-transport-security"], what).toBeUndefined();
}

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  );
}

test("pages, the API and static files carry the security headers; each page load has its own nonce", async ({
  request,
}) => {
  const first = await request.get(`${base}/sign-in`);
  const second = await request.get(`${base}/sign-in`);
  expect(first.status()).toBe(200);
  expectStaticHeaders(first, "page");
  const cspOf = (res: APIResponse) => res.headers()["content-security-policy"] ?? "";
  const csp = directives(cspOf(first));
  expect(Object.fromEntries(csp)).toMatchObject({
    "default-src": ["'self'"],
    "style-src": ["'self'", expect.stringMatching(/^'nonce-/)],
    "img-src": ["'self'", "data:", "blob:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
  });
  const script = csp.get("script-src")!;
  expect(script).toEqual(["'self'", expect.stringMatching(/^'nonce-[A-Za-z0-9+/]+=*'$/), "'strict-dynamic'"]);
  expect(script).not.toContain("'unsafe-inline'");
  expect(script).not.toContain("'unsafe-eval'");
  const nonceOf = (res: APIResponse) => /'nonce-([^']+)'/.exec(cspOf(res))?.[1];
  expect(nonceOf(first)).toBeTruthy();
  expect(nonceOf(second)).toBeTruthy();
  expect(nonceOf(first)).not.toBe(nonceOf(second));

  // Next.js put the request's nonce on every script it wrote.
  const html = await first.text();
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  expect(scripts.length).toBeGreaterThan(0);
  for (const tag of scripts) expect(tag, tag).toContain(`nonce="${nonceOf(first)}"`);

  // A signed-out visit to the console redirects to sign-in; the redirect carries the headers too.
  const redirect = await request.get(`${base}/audit`, { maxRedirects: 0 });
  expect(redirect.status()).toBeGreaterThanOrEqual(300);
  expectStaticHeaders(redirect, "redirect");
  expect(cspOf(redirect)).toContain("frame-ancestors 'none'");

  const apiCsp = "default-src 'none'; frame-ancestors 'none'";
  const health = await request.get(`${base}/api/health`);
  expect(health.status()).toBe(200);
  expectStaticHeaders(health, "/api/health");
  expect(cspOf(health)).toBe(apiCsp);
  const queue = await request.get(`${base}/api/v1/queue`);
  expect(queue.status()).toBe(401);
  expectStaticHeaders(queue, "/api/v1/queue");
  expect(cspOf(queue)).toBe(apiCsp);
  // An API address answered by the proxy (an undecodable %-escape) too.
  const undecodable = await request.get(`${base}/api/v1/invocations/%E0%A4%A`);
  expect(undecodable.status()).toBe(400);
  expectStaticHeaders(undecodable, "undecodable API path");
  expect(cspOf(undecodable)).toBe(apiCsp);

  const asset = /(?:src|href)="(\/_next\/static\/[^"]+\.(?:js|css))"/.exec(html)?.[1];
  expect(asset, "a static asset on the sign-in page").toBeTruthy();
  const file = await request.get(`${base}${asset}`);
  expect(file.status()).toBe(200);
  expectStaticHeaders(file, asset!);
});
