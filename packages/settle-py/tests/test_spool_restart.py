"""The spool survives Settle being stopped and restarted mid-run: what was reported while it was
down (by this process, and by one that exited meanwhile) reaches it when it is back, nothing lost and
nothing twice; a money call made while it was down was never made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import urllib.error
from typing import Any, Dict

import support
from settle_client import Settle, SettleUnreachable
from support.settle_server import shared_settle


def record(task: str, n: int) -> Dict[str, Any]:
    return {"event_id": f"{task}:r{n}", "task_id": task, "invocation_id": f"{task}:inv-{n}", "tool": "lookup_price", "effect_class": "read", "envelope": {"outcome": "ok", "effect_applied": "yes"}}


class SpoolAcrossRestartTest(unittest.TestCase):
    def test_records_reported_while_settle_is_down_reach_it_when_it_is_back(self) -> None:
        server = shared_settle()
        spool = tempfile.TemporaryDirectory(prefix="settle-py-spool-")
        self.addCleanup(spool.cleanup)
        client = Settle(server.url, server.key, spool_dir=spool.name, max_retries=1, timeout_s=5, spool_retry_s=30)
        self.addCleanup(client.close, 5)
        task = f"restart-{os.getpid()}-{int(time.time())}"
        self.assertEqual(client.report(record(task, 0)).result(10)["status"], "accepted")

        server.stop()
        self.addCleanup(shared_settle)  # whatever happens here, the next test finds Settle running
        statuses = [r["status"] for r in client.report([record(task, 1), record(task, 2), record(task, 3)]).result(30)]
        self.assertEqual(statuses, ["spooled"] * 3)
        price = client.wrap_tool(lambda sku: {"sku": sku, "cents": 420}, effect_class="read", task_id=task, idempotency_key="price-sku-1", tool="lookup_price")
        self.assertEqual(price("sku-1"), {"sku": "sku-1", "cents": 420})
        calls = []
        charge = client.wrap_tool(lambda cents: calls.append(cents), effect_class="money", task_id=task, idempotency_key="charge-1", tool="charge_card")
        with self.assertRaises(SettleUnreachable):
            charge(4200)
        self.assertEqual(calls, [])
        # Another process reports while Settle is down, and exits: its atexit handler spools the record.
        other = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(f"""
                from settle_client import Settle
                Settle({server.url!r}, {server.key!r}, spool_dir={spool.name!r}, max_retries=1).report({json.dumps(record(task, 4))})
            """)],
            env={**os.environ, "PYTHONPATH": str(support.SRC)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        self.assertEqual(other.returncode, 0, other.stderr)
        self.assertEqual(client.spooled_batches(), 4)  # the batch of three, the read's intent and outcome, the other process's record

        server.start()
        # The first answered request wakes the spool; it does not wait for its next retry.
        create = client.wrap_tool(lambda: "order-1", effect_class="create", task_id=task, idempotency_key="order-1", tool="create_order")
        self.assertEqual(create(), "order-1")
        deadline = time.monotonic() + 15
        while client.spooled_batches() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(client.spooled_batches(), 0)

        for n in range(5):
            invocation = server.api("GET", f"/api/v1/invocations/{task}:inv-{n}")
            self.assertEqual((invocation["status"], invocation["attempt_count"]), ("succeeded", 1), n)
        read = server.api("GET", f"/api/v1/invocations/{task}:price-sku-1")
        self.assertEqual(read["status"], "succeeded")
        self.assertEqual(sorted(a["phase"] for a in read["attempts"]), ["intent", "outcome"])
        with self.assertRaises(urllib.error.HTTPError) as missing:
            server.api("GET", f"/api/v1/invocations/{task}:charge-1")
        self.assertEqual(missing.exception.code, 404)
        # Sent again, the spooled records are duplicates: nothing twice.
        answer = server.api("POST", "/api/v1/envelopes", {"records": [record(task, n) for n in range(1, 5)]})
        self.assertEqual(answer["duplicates"], 4)


if __name__ == "__main__":
    unittest.main()
