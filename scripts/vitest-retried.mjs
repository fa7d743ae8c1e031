// A Vitest reporter for `npm test`: writes the tests that failed first and passed when run again (npm test
// runs Vitest with --retry 1) to $SETTLE_VITEST_RETRIED, so the run's last lines can name them. A test that
// fails twice still fails the run; one that needed its second try is flaky and named, not hidden
// (docs/decisions/045-ci-retries-once.md).
import { writeFileSync } from "node:fs";
import path from "node:path";

export default class RetriedReporter {
  retried = [];

  onTestCaseResult(testCase) {
    const diagnostic = testCase.diagnostic();
    if (!diagnostic || diagnostic.retryCount === 0 || testCase.result().state !== "passed") return;
    this.retried.push({
      file: path.relative(process.cwd(), testCase.module.moduleId),
      name: testCase.fullName,
      tries: diagnostic.retryCount + 1,
      // What the failed try threw (Vitest keeps it on the test): for a property test, fast-check's seed and
      // counterexample are in its first lines, so the failure can be replayed.
      error: (testCase.result().errors?.[0]?.message ?? "").split("\n").slice(0, 4).join(" | ").slice(0, 400),
    });
  }

  onTestRunEnd() {
    const out = process.env.SETTLE_VITEST_RETRIED;
    if (out) writeFileSync(out, `${JSON.stringify(this.retried, null, 2)}\n`);
  }
}
