import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docScreenshot } from "@/e2e/screenshots";
import { OUT_DIR } from "@/e2e/server";

// Running the e2e suite rewrote the committed PNGs in docs/screenshots (the specs wrote there on every run), so
// it left the git tree dirty. Every screenshot now goes under the run's output folder; the committed ones are
// written only with SETTLE_UPDATE_SCREENSHOTS=1 (e2e/screenshots.ts).

const e2e = path.join(process.cwd(), "e2e");
const specs = readdirSync(e2e).filter((f) => f.endsWith(".spec.ts"));

describe("the e2e suite's screenshots", () => {
  it("go under the run's output folder, and to docs/screenshots only when asked", () => {
    expect(docScreenshot("queue-wide.png", {})).toBe(path.join(OUT_DIR, "screenshots", "queue-wide.png"));
    expect(docScreenshot("queue-wide.png", { SETTLE_UPDATE_SCREENSHOTS: "0" })).toBe(
      path.join(OUT_DIR, "screenshots", "queue-wide.png"),
    );
    expect(docScreenshot("queue-wide.png", { SETTLE_UPDATE_SCREENSHOTS: "1" })).toBe(
      path.join("docs", "screenshots", "queue-wide.png"),
    );
  });

  it("no spec names a place of its own: the docs' folder, test-results or /tmp", () => {
    const named = specs.flatMap((spec) =>
      [
        ...readFileSync(path.join(e2e, spec), "utf8").matchAll(/screenshot\(\{\s*path:\s*(["'`])(?!\$\{)([^"'`]*)\1/g),
      ].map((m) => `${spec}: ${m[2]}`),
    );
    expect(specs.length).toBeGreaterThan(10);
    expect(named).toEqual([]);
  });
});
