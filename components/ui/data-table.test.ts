import { createElement, type ReactNode } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { actionsColumn, DataTable, type Column, type DataTableProps } from "./data-table";
import { StateLabel } from "./page";

// The kit's table is what every console list is drawn with: what it promises the screens (and their tests,
// which find rows by test id and cells by role) is checked here, on the HTML React renders.

type Key = { prefix: string; runtime: string; revoked: boolean };

const keys: Key[] = [
  { prefix: "stl_rk_aaaa", runtime: "billing-agent", revoked: false },
  { prefix: "stl_rk_bbbb", runtime: "support-bot", revoked: true },
];

const columns: Array<Column<Key>> = [
  { header: "Runtime", rowHeader: true, cell: (k) => k.runtime },
  { header: "Prefix", className: "mono", cell: (k) => k.prefix },
  actionsColumn((k) => (k.revoked ? null : createElement("button", null, `Revoke ${k.prefix}`))),
];

const html = (props: Partial<DataTableProps<Key>>) =>
  renderToStaticMarkup(
    createElement(DataTable<Key>, {
      caption: "Runtime keys",
      columns,
      rows: keys,
      row: { key: (k) => k.prefix, testId: "key-row", dimmed: (k) => k.revoked },
      ...props,
    }),
  );

const count = (text: string, pattern: RegExp) => (text.match(pattern) ?? []).length;

describe("DataTable", () => {
  it("names the table by its caption and draws a header cell per column, the actions one for screen readers only", () => {
    const page = html({});
    expect(page).toContain('<caption class="sr-only">Runtime keys</caption>');
    expect(count(page, /<th scope="col"/g)).toBe(3);
    expect(page).toMatch(/<th scope="col"[^>]*><span class="sr-only">Actions<\/span><\/th>/);
  });

  it("draws a row per item with its test id, the naming cell as a row header, and a no longer acting row muted", () => {
    const page = html({});
    expect(count(page, /data-testid="key-row"/g)).toBe(2);
    expect(count(page, /<th scope="row"/g)).toBe(2);
    const rows = page.split('<tr data-testid="key-row"').slice(1);
    expect(rows[0]).not.toContain("bg-slate-50 text-slate-500");
    expect(rows[1]).toMatch(/^ class="bg-slate-50 text-slate-500"/);
    expect(rows[0]).toContain("Revoke stl_rk_aaaa");
    expect(rows[1]).not.toContain("Revoke");
  });

  it("shows the empty state instead of the table when there is nothing to list", () => {
    const page = html({ rows: [], empty: createElement("p", null, "No runtime keys yet.") });
    expect(page).toContain("No runtime keys yet.");
    expect(page).not.toContain("<table");
  });

  it("still draws the (empty) table when the screen gives no empty state", () => {
    const page = html({ rows: [] });
    expect(page).toContain("<table");
    expect(count(page, /<tr data-testid/g)).toBe(0);
  });

  it("says it is loading instead of drawing stale or empty rows", () => {
    const page = html({ loading: true, empty: createElement("p", null, "No runtime keys yet.") });
    expect(page).toContain("Loading…");
    expect(page).not.toContain("<table");
    expect(page).not.toContain("No runtime keys yet.");
  });

  it("tells a failed refresh as an alert above the rows it still shows", () => {
    const page = html({ error: new Error("Settle is restarting.") });
    expect(page).toMatch(/<p role="alert"[^>]*>Could not refresh the list: Settle is restarting\.<\/p>/);
    expect(page.indexOf('role="alert"')).toBeLessThan(page.indexOf("<table"));
    expect(count(page, /data-testid="key-row"/g)).toBe(2);
  });

  it("lets the screen draw a row itself (a row edited in place) and keeps the others", () => {
    const editor = (k: Key): ReactNode =>
      k.prefix === "stl_rk_aaaa" ? createElement("tr", { "data-testid": "editing" }) : undefined;
    const page = html({ row: { key: (k) => k.prefix, testId: "key-row", render: editor } });
    expect(count(page, /data-testid="editing"/g)).toBe(1);
    expect(count(page, /data-testid="key-row"/g)).toBe(1);
  });

  it("opens a row's details in a cell across every column", () => {
    const page = html({
      row: { key: (k) => k.prefix, detail: (k) => (k.revoked ? createElement("pre", null, "details") : null) },
    });
    expect(page).toMatch(/<td colspan="3"[^>]*><pre>details<\/pre><\/td>/i);
    expect(count(page, /colspan/gi)).toBe(1);
  });

  it("puts the footer (show more) inside the frame, under the rows", () => {
    const page = html({ footer: createElement("button", null, "Show more") });
    expect(page.indexOf("Show more")).toBeGreaterThan(page.indexOf("</table>"));
  });
});

describe("StateLabel", () => {
  it("says the state in words after a glyph screen readers skip, and what it adds after the word", () => {
    const page = renderToStaticMarkup(createElement(StateLabel, { state: "revoked" }, "2026-12-07 05:09 UTC"));
    expect(page).toContain('<span aria-hidden="true">⊘</span>Revoked 2026-12-07 05:09 UTC');
  });
});
