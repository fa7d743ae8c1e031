"""Seed 002's six failures against a real Settle, with `async def` tools."""

import unittest

import support  # noqa: F401
from support.fixtures import FixturesAgainstSettle


class AsyncFixturesTest(FixturesAgainstSettle):
    mode = "async"


del FixturesAgainstSettle  # the base class is not a test of its own

if __name__ == "__main__":
    unittest.main()
