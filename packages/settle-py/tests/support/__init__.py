"""Helpers for settle-py's tests. Importing this package makes `settle_client` importable from the
source tree, so `python3 -m unittest discover -s packages/settle-py/tests` works without installing."""

import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))
