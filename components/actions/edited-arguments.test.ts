import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ApiClientError } from "@/lib/query/fetch";
import type { ErrorEnvelope } from "@/lib/errors";
import { ChangesDiff } from "../ui/changes-diff";
import { approvalArguments, approvalRefusal, readEditedArguments } from "./edited-arguments";

// Approve with edits in the console: which arguments the dialog opens, how the editor's text is read, how the
// API's refusals are told, and how a diff reads.

const refusal = (status: number, code: string, message: string, details: object = {}) =>
  new ApiClientError(status, { code, agent_message: message, safe_details: details } as unknown as ErrorEnvelope);

describe("approve with edits in the console", () => {
  it("opens the edit awaiting approval when there is one, else the call's latest arguments", () => {
    const attempts = [{ arguments: { amount: 100 } }, { arguments: null }] as never;
    expect(approvalArguments({ attempts, arguments_edit: null })).toEqual({
      arguments: { amount: 100 },
      editedBy: null,
    });
    const edit = { arguments: { amount: 50 }, by: "ana@example.com", digest: "sha256:x", at: "2026-12-07T10:00:00Z" };
    expect(approvalArguments({ attempts, arguments_edit: { ...edit, state: "pending" } })).toEqual({
      arguments: { amount: 50 },
      editedBy: "ana@example.com",
    });
    // An edit already approved is not what a new approval is for.
    expect(approvalArguments({ attempts, arguments_edit: { ...edit, state: "approved" } }).arguments).toEqual({
      amount: 100,
    });
  });

  it("reads the editor's text as an object, keeps long integers exact, and says where JSON is broken", () => {
    expect(readEditedArguments('{"order": 12345678901234567890, "amount": 50}')).toEqual({
      ok: true,
      value: { order: 12345678901234567890n, amount: 50 },
    });
    const broken = readEditedArguments('{\n  "amount": 50,\n  "currency" "EUR"\n}');
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.error).toMatch(/^Not valid JSON \(line 3, column 14\): /);
    expect(readEditedArguments("[1, 2]")).toEqual({ ok: false, error: expect.stringContaining("a JSON object") });
    expect(readEditedArguments("null")).toMatchObject({ ok: false });
    expect(readEditedArguments("  ")).toEqual({ ok: false, error: expect.stringContaining("empty") });
  });

  it("tells an expired or rejected approval, someone else's action and a refused edit apart", () => {
    const expired = approvalRefusal(
      refusal(409, "VERSION_CONFLICT", "Someone else changed this invocation", { status: "rejected", version: 3 }),
    );
    expect(expired).toMatchObject({ final: true });
    expect(expired.text).toContain("the approval expired or someone rejected the call");
    const other = approvalRefusal(
      refusal(409, "VERSION_CONFLICT", "Someone else changed", { status: "awaiting_approval", version: 3 }),
    );
    expect(other.text).toContain("someone else acted while you were editing (it is now awaiting_approval, version 3)");
    const redacted = approvalRefusal(
      refusal(400, "INVALID_REQUEST", "Nothing was changed: the edited arguments hold [redacted]"),
    );
    expect(redacted).toEqual({
      text: "Settle refused this edit. Nothing was changed: the edited arguments hold [redacted]",
      final: false,
    });
  });

  it("marks each member added, removed or changed, with its value as JSON text", () => {
    const html = renderToStaticMarkup(
      createElement(ChangesDiff, {
        caption: "changes",
        changes: [
          { path: "amount", before: 100, after: "50" },
          { path: "ticket", after: "T-9" },
          { path: "coupon", before: null },
        ],
      }),
    );
    const rows = [...html.matchAll(/data-change="(\w+)"/g)].map((m) => m[1]);
    expect(rows).toEqual(["changed", "added", "removed"]);
    // 50 became the string "50": the quotes show it.
    expect(html).toContain("&quot;50&quot;");
    expect(html).toContain(">100<");
    expect(html).toContain(">null<");
  });
});
