import { describe, expect, it } from "vitest";
import { CHAINED } from "../chain/entries";
import { TRANSITION_COLUMNS } from "./chain-links";
import { ATTEMPT_ROW_COLUMNS } from "./write-statement";

// A spliced content hash (decision 047) is the write's row as jsonb prints it: the row must hold the entry's
// columns in the order of its canonical content, between the runtime and the time it was written.
describe("the write path's chained rows", () => {
  it.each([
    ["attempt", ATTEMPT_ROW_COLUMNS],
    ["transition", TRANSITION_COLUMNS],
  ] as const)("hold a %s's content columns in order, time for time and jsonb for jsonb", (kind, row) => {
    const content = CHAINED[kind].columns.slice(1, -1);
    expect(row.map(([name]) => name)).toEqual(content.map(([name]) => name));
    expect(row.map(([, type]) => (type === "timestamptz" ? "time" : type === "jsonb" ? "jsonb" : undefined))).toEqual(
      content.map(([, form]) => form),
    );
  });
});
