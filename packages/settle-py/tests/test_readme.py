"""The README's Python quick start word for word, run against a real Settle: it creates the order once and
is refused the second time. (The root's tests/integration/readme.test.ts runs every quick start as a new user
does, pip install included; this one keeps the client's own suite honest about the README.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Dict

import support
from support.settle_server import REPO, shared_settle


def quick_start(info: str) -> str:
    readme = (REPO / "README.md").read_text()
    found = re.search(rf"```{re.escape(info)}\n(.*?)```", readme, re.S)
    assert found, f"no ```{info} block in the README"
    return found.group(1)


class ReadmeQuickStartTest(unittest.TestCase):
    def run_snippet(self, code: str, suffix: str, command: list, key: str) -> str:
        folder = tempfile.TemporaryDirectory(prefix="settle-py-readme-")
        self.addCleanup(folder.cleanup)
        path = Path(folder.name) / f"quickstart{suffix}"
        path.write_text(code)
        server = shared_settle()
        env: Dict[str, str] = {**os.environ, "SETTLE_URL": server.url, "SETTLE_KEY": key, "SETTLE_SPOOL_DIR": folder.name, "PYTHONPATH": str(support.SRC)}
        run = subprocess.run([*command, str(path)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def test_the_python_quick_start(self) -> None:
        out = self.run_snippet(quick_start("python file=quickstart.py"), ".py", [sys.executable], shared_settle().key)
        self.assertEqual(out.splitlines(), ["{'id': 'o-1', 'cart': 'cart-1'}", "DuplicateRefused committed none"])

if __name__ == "__main__":
    unittest.main()
