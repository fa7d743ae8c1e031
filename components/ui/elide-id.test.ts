import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { elideId, ID_HEAD, ID_TAIL } from "./elide-id";
import { InvocationId } from "./invocation-id";

// A gateway invocation id: task id, idempotency key (a digest) and the gateway's own suffix.
const gateway = `support-task-2026-12-07-8f3a:${"ab12".repeat(16)}:gw-1c2d3e4f`;

describe("elideId", () => {
  it("keeps a short id whole, up to head + tail + 1 characters", () => {
    expect(elideId("ord-1:key-1")).toBe("ord-1:key-1");
    const edge = "x".repeat(ID_HEAD + ID_TAIL + 1);
    expect(elideId(edge)).toBe(edge);
  });

  it("shows a long id's head and tail around one ellipsis", () => {
    expect(gateway.length).toBeGreaterThan(100);
    const shown = elideId(gateway);
    expect(shown).toBe(`${gateway.slice(0, ID_HEAD)}…${gateway.slice(-ID_TAIL)}`);
    expect(shown).toBe("support-task-2026-12-07-…:gw-1c2d3e4f");
    expect(Array.from(shown)).toHaveLength(ID_HEAD + ID_TAIL + 1);
  });

  it("cuts by code point, never inside an emoji", () => {
    const shown = elideId(`${"🧾".repeat(30)}-tail-end`, 3, 4);
    expect(shown).toBe("🧾🧾🧾…-end");
  });
});

describe("InvocationId", () => {
  const html = (props: { id: string; copy?: boolean; short?: boolean }) =>
    renderToStaticMarkup(createElement(InvocationId, props));

  it("shows the elided form, with the whole id in the tooltip and for screen readers", () => {
    const out = html({ id: gateway });
    expect(out).toContain(`title="${gateway}"`);
    expect(out).toContain(
      `<span aria-hidden="true" class="min-w-0 break-all" data-testid="elided-id">${elideId(gateway)}</span>`,
    );
    expect(out).toContain(`<span class="sr-only">${gateway}</span>`);
    expect(out).not.toContain("<button");
  });

  it("shows a shorter head in a narrow column, the tail whole", () => {
    expect(html({ id: gateway, short: true })).toContain(">support-…:gw-1c2d3e4f</span>");
  });

  it("shows a short id once, and a copy button when asked", () => {
    const out = html({ id: "ord-1:key-1", copy: true });
    expect(out).not.toContain("elided-id");
    expect(out.match(/ord-1:key-1/g)).toHaveLength(2); // the text and the title
    expect(out).toContain('aria-label="Copy the invocation id"');
  });
});
