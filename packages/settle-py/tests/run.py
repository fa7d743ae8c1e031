"""Runs settle-py's whole suite (unittest discovery over this folder) and writes the counts as JSON
for scripts/test.mjs's tally:

    python3 packages/settle-py/tests/run.py [--json FILE] [--require-server]

--require-server makes a missing Next.js build a failure instead of skipping the tests that need a
running Settle (npm test passes it: its build step comes first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", help="where to write {passed, failed, skipped, tests, seconds, failures}")
    parser.add_argument("--require-server", action="store_true")
    args = parser.parse_args()
    if args.require_server:
        os.environ["SETTLE_PY_REQUIRE_SERVER"] = "1"
    sys.path.insert(0, str(HERE))

    started = time.monotonic()
    suite = unittest.defaultTestLoader.discover(str(HERE), top_level_dir=str(HERE))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    counts = {
        "tests": result.testsRun,
        "passed": result.testsRun - failed - skipped - len(result.expectedFailures),
        "failed": failed,
        "skipped": skipped,
        "seconds": round(time.monotonic() - started, 1),
        # Which tests failed, so the end of a CI log names them.
        "failures": [test.id() for test, _ in result.failures + result.errors]
        + [test.id() for test in result.unexpectedSuccesses],
    }
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(counts) + "\n")
    print(f"settle-py: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped in {counts['seconds']} s")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
