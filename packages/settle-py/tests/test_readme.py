"""The README's quick start, both columns word for word, run as a new user would run them against a
real Settle: each creates the order once and is refused the second time."""

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


def quick_start(language: str) -> str:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("**Quick start.**") :]
    found = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert found, f"no {language} block in the README's quick start"
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
        out = self.run_snippet(quick_start("python"), ".py", [sys.executable], shared_settle().key)
        self.assertEqual(out.splitlines(), ["{'id': 'o-1', 'cart': 'cart-1'}", "DuplicateRefused committed none"])

    def test_the_typescript_quick_start(self) -> None:
        # Another runtime: the guard judges each runtime's keys apart, and the Python one used the same key.
        out = self.run_snippet(quick_start("ts"), ".mts", ["node", "--import", "tsx"], shared_settle().new_key("readme-ts"))
        self.assertEqual(out.count("status: 'done'"), 2)
        self.assertEqual(re.findall(r"calls: (\d+)", out), ["1", "0"])
        self.assertIn("value: { id: 'o-1', cart: 'cart-1' }", out)


if __name__ == "__main__":
    unittest.main()
