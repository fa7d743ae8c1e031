"""Against a real Settle (`npm start`): 200 rounds of a request Settle answers before reading its body
(a guard over 64 KiB: 413), then an ordinary report. Every report is answered and stored once, none
resent: an early answer costs the client nothing but that request."""

from __future__ import annotations

import os
import time
import unittest

import support  # noqa: F401
from settle_client import Settle, SettleError
from support.settle_server import shared_settle

ROUNDS = 200


class EarlyAnswersTest(unittest.TestCase):
    def test_an_early_answer_never_costs_the_next_request(self) -> None:
        server = shared_settle()
        client = Settle(server.url, server.key, spool=False, max_retries=0, timeout_s=10, batch_delay_s=0)
        self.addCleanup(client.close, 5)
        task = f"early-{os.getpid()}-{int(time.time())}"
        big = {"task_id": task, "tool": "charge_card", "idempotency_key": "k", "envelope": "x" * 72_000}
        for n in range(ROUNDS):
            with self.assertRaises(SettleError) as refused:
                client.guard_body(big)  # type: ignore[arg-type]
            self.assertEqual((refused.exception.status, refused.exception.code), (413, "PAYLOAD_TOO_LARGE"))
            result = client.report({"event_id": f"{task}:{n}", "task_id": task, "invocation_id": f"{task}:inv-{n}", "tool": "lookup_price", "effect_class": "read", "envelope": {"outcome": "ok"}}).result(15)
            self.assertEqual((result["status"], result["resent"]), ("accepted", False), f"round {n}")


if __name__ == "__main__":
    unittest.main()
