import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { InvocationGuardRefusals, TaskGuardRefusals } from "./guard-refusals";

const text = (html: string) => html.replace(/<[^>]+>/g, "");

describe("the guard's refusals on the invocation and task pages", () => {
  it("an invocation says how often another call of its intent was refused, and why", () => {
    const html = renderToStaticMarkup(
      createElement(InvocationGuardRefusals, {
        runtime: "my-agent",
        refusals: [
          {
            reason: "already_committed",
            task_id: "quickstart-1",
            idempotency_key: "k",
            refused: 1,
            last_at: "2026-12-07T09:00:00.000Z",
          },
        ],
      }),
    );
    expect(text(html)).toMatch(
      /Refused by the guard.*refused once, since it was already committed.*task quickstart-1\)\. Nothing was called\./,
    );
    expect(renderToStaticMarkup(createElement(InvocationGuardRefusals, { runtime: "r", refusals: [] }))).toBe("");
  });

  it("a task names the invocation that blocked each refused call, or the one it would duplicate", () => {
    const html = renderToStaticMarkup(
      createElement(TaskGuardRefusals, {
        runtime: "my-agent",
        refusals: [
          {
            reason: "in_flight",
            invocation_id: "inv-1",
            idempotency_key: "k1",
            refused: 2,
            last_at: "2026-12-07T09:00:00.000Z",
          },
          {
            reason: "possible_duplicate",
            invocation_id: "inv-0",
            idempotency_key: "k2",
            refused: 1,
            last_at: "2026-12-07T08:00:00.000Z",
          },
        ],
      }),
    );
    expect(text(html)).toMatch(/key k1 was refused 2 times .*inv-1 blocked it, since it was still in flight/);
    expect(text(html)).toMatch(/key k2 was refused once .*a possible duplicate of inv-0/);
    expect(html).toContain('href="/invocations/inv-1?runtime=my-agent"');
  });
});
