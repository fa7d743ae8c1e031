"""The package (and its examples) pass `mypy --strict` for Python 3.9, when a mypy can be found:
this interpreter's, Debian's python3-mypy (/usr/bin/python3 -m mypy), or `mypy` on the PATH."""

from __future__ import annotations

import shutil
import subprocess
import sys
import unittest
from pathlib import Path
from typing import List, Optional

import support

PACKAGE = support.SRC.parent


def find_mypy() -> Optional[List[str]]:
    for python in (sys.executable, "/usr/bin/python3"):
        if Path(python).exists() and subprocess.run([python, "-m", "mypy", "--version"], capture_output=True).returncode == 0:
            return [python, "-m", "mypy"]
    found = shutil.which("mypy")
    return [found] if found else None


class TypesTest(unittest.TestCase):
    def test_mypy_strict_passes(self) -> None:
        mypy = find_mypy()
        if mypy is None:
            self.skipTest("no mypy here (apt-get install python3-mypy)")
        run = subprocess.run(
            [*mypy, "--strict", "--python-version", "3.9", "--no-incremental", "src/settle_client", "examples"],
            cwd=PACKAGE,
            env={"PATH": "/usr/bin:/bin", "MYPYPATH": str(support.SRC)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_the_package_says_it_is_typed(self) -> None:
        self.assertTrue((support.SRC / "settle_client" / "py.typed").exists())


if __name__ == "__main__":
    unittest.main()
