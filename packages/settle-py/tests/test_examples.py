"""The examples run as a reader would run them (SETTLE_URL, SETTLE_KEY), against a real Settle, and
show what they say they show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest

import support
from support.settle_server import shared_settle

EXAMPLES = support.SRC.parent / "examples"


class ExamplesTest(unittest.TestCase):
    def run_example(self, name: str) -> str:
        server = shared_settle()
        spool = tempfile.TemporaryDirectory(prefix="settle-py-spool-")
        self.addCleanup(spool.cleanup)
        env = {**os.environ, "SETTLE_URL": server.url, "SETTLE_KEY": server.key, "SETTLE_SPOOL_DIR": spool.name, "PYTHONPATH": str(support.SRC)}
        run = subprocess.run([sys.executable, str(EXAMPLES / name)], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def test_plain_tool_creates_once_and_the_repeat_is_refused(self) -> None:
        self.assertEqual(self.run_example("plain_tool.py").splitlines(), ["created {'id': 'order-1', 'sku': 'sku-1'}", "DuplicateRefused committed none", "orders in the shop: 1"])

    def test_async_tool_sends_two_notices(self) -> None:
        self.assertEqual(self.run_example("async_tool.py").splitlines(), ["sms to +15550100: Your refund is on its way.", "sms to +15550100: Your refund has arrived."])

    def test_langchain_style_hands_the_model_settles_verdict(self) -> None:
        self.assertEqual(self.run_example("langchain_style.py").splitlines(), ["refunded 1500 cents on ord-17", "DUPLICATE_REFUSED", "refunded in all: {'ord-17': 1500}"])

    def test_openai_style_answers_each_function_call(self) -> None:
        lines = self.run_example("openai_agents_style.py").splitlines()
        self.assertEqual(lines[0], 'call_1 {"ticket": "T-1", "summary": "Parcel arrived damaged"}')
        verdict = json.loads(lines[1].split(" ", 1)[1])
        self.assertEqual((verdict["code"], verdict["commit_state"], verdict["next_action"]), ("DUPLICATE_REFUSED", "committed", "none"))
        self.assertEqual(lines[2], "tickets: {'cus_8': 'T-1'}")


if __name__ == "__main__":
    unittest.main()
