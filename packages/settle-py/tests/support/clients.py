"""Clients for tests: each with its own spool directory, closed when the test ends."""

from __future__ import annotations

import socket
import tempfile
import unittest
from typing import Any, List

from settle_client import Settle


def make_client(test: unittest.TestCase, url: str, key: str = "stl_rk_test", **options: Any) -> Settle:
    if "spool_dir" not in options and options.get("spool", True):
        spool = tempfile.TemporaryDirectory(prefix="settle-py-spool-")
        test.addCleanup(spool.cleanup)
        options["spool_dir"] = spool.name
    client = Settle(url, key, **options)
    test.addCleanup(client.close, 2.0)
    return client


def recording_sleep() -> "tuple[List[float], Any]":
    sleeps: List[float] = []
    return sleeps, sleeps.append


def free_port() -> int:
    """A port nothing listens on (Settle "unreachable"), or one to start a server on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
