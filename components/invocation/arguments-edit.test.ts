import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { InvocationView } from "@/lib/invocations/read";
import { ArgumentsEdit } from "./arguments-edit";

// The invocation page's edit: pending (approvals so far are for it) or approved (the runtime runs with it),
// as a diff against the call's own latest arguments.

const text = (html: string) => html.replace(/<[^>]+>/g, "");

const inv = (edit: InvocationView["arguments_edit"], approvals: InvocationView["approvals"] = null) =>
  ({
    attempts: [{ arguments: { amount: 100, currency: "EUR" } }, { arguments: null }],
    arguments_edit: edit,
    approvals,
  }) as unknown as InvocationView;

const edit = {
  arguments: { amount: 50, currency: "EUR", ticket: "T-9" },
  digest: "sha256:e",
  by: "ana@example.com",
  at: "2026-12-07T10:00:00.000Z",
};

describe("the edit on the invocation page", () => {
  it("shows nothing without an edit", () => {
    expect(renderToStaticMarkup(createElement(ArgumentsEdit, { inv: inv(null) }))).toBe("");
  });

  it("a pending edit: who, when, the approvals so far, and what changed against the call's arguments", () => {
    const html = renderToStaticMarkup(
      createElement(ArgumentsEdit, {
        inv: inv({ ...edit, state: "pending" }, { count: 1, quorum: 2, by: ["ana@example.com"] } as never),
      }),
    );
    expect(html).toContain('data-state="pending"');
    expect(text(html)).toContain("Edited arguments awaiting approval");
    expect(text(html)).toContain("ana@example.com changed the arguments at 2026-12-07 10:00:00 UTC");
    expect(text(html)).toContain("(1 of 2)");
    expect([...html.matchAll(/data-change="(\w+)"/g)].map((m) => m[1])).toEqual(["changed", "added"]);
  });

  it("an approved edit says the runtime runs with it", () => {
    const html = renderToStaticMarkup(createElement(ArgumentsEdit, { inv: inv({ ...edit, state: "approved" }) }));
    expect(text(html)).toContain("Approved with edited arguments");
    expect(text(html)).toContain("The runtime is to run the call with these");
  });
});
