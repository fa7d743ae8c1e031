"""The same decorator on an `async def`: the same sequence, the tool awaited in the caller's loop,
a budget that cancels it, and a cancelled caller that is reported before the cancellation goes on."""

from __future__ import annotations

import asyncio
import inspect
import time
import unittest
from typing import Any, Dict, List

import support  # noqa: F401
from settle_client import OutcomeUnknown, ProbeFinding, current_call
from support.clients import make_client
from support.fake_settle import FakeSettle

OPTIONS: Dict[str, Any] = {"effect_class": "create", "task_id": "ord-1", "idempotency_key": "key-1", "tool": "create_order"}


class AsyncWrapToolTest(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = FakeSettle()
        self.addCleanup(self.settle.close)
        self.client = make_client(self, self.settle.url, sleep=lambda s: None)

    def test_an_async_tool_goes_through_the_same_sequence(self) -> None:
        @self.client.tool(**OPTIONS)
        async def create_order(sku: str) -> Dict[str, str]:
            """Creates an order."""
            await asyncio.sleep(0)
            self.settle.log.append(f"tool {current_call().idempotency_key}")
            return {"id": f"order-{sku}"}

        self.assertTrue(inspect.iscoroutinefunction(create_order))
        self.assertEqual(list(inspect.signature(create_order).parameters), ["sku"])
        self.assertEqual(asyncio.run(create_order("a")), {"id": "order-a"})
        self.assertEqual(self.settle.log, ["POST guard", "post intent", "tool key-1", "post outcome", "GET decision"])

    def test_unknown_then_an_async_probe_finds_nothing_then_one_retry_with_the_same_key(self) -> None:
        keys: List[str] = []

        async def create() -> str:
            keys.append(current_call().idempotency_key)
            if len(keys) == 1:
                raise ConnectionResetError("reset")
            return "order-a"

        async def probe(key: str) -> ProbeFinding[str]:
            await asyncio.sleep(0)
            return ProbeFinding(False)

        run = asyncio.run(self.client.wrap_tool(create, probe=probe, **OPTIONS).run())
        self.assertEqual((run.status, run.calls, run.value), ("done", 2, "order-a"))
        self.assertEqual(keys, ["key-1", "key-1"])
        self.assertEqual([r["event_id"] for r in self.settle.records], ["ord-1:key-1:a1:intent", "ord-1:key-1:a1:outcome", "ord-1:key-1:a1:probe:v2", "ord-1:key-1:a2:intent", "ord-1:key-1:a2:outcome"])

    def test_past_its_budget_the_coroutine_is_cancelled_and_the_outcome_is_unknown(self) -> None:
        cancelled: List[bool] = []

        async def create() -> str:
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise
            return "late"

        with self.assertRaises(OutcomeUnknown):
            asyncio.run(self.client.wrap_tool(create, timeout_s=0.05, decision_timeout_s=0.1, **OPTIONS)())
        self.assertEqual(cancelled, [True])
        self.assertEqual(self.settle.records[1]["envelope"]["message"], "no answer within 50 ms; the call may still complete")

    def test_a_cancelled_caller_reports_the_call_unknown_then_stays_cancelled(self) -> None:
        started: List[asyncio.Event] = []

        async def create() -> str:
            started[0].set()
            await asyncio.sleep(5)
            return "late"

        async def main() -> None:
            started.append(asyncio.Event())  # made in the loop: Python 3.9's Event binds to the loop current when it is made
            running = asyncio.ensure_future(self.client.wrap_tool(create, **OPTIONS)())
            await started[0].wait()
            running.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await running

        asyncio.run(main())
        self.assertEqual([r.get("phase") for r in self.settle.records], ["intent", "outcome"])
        self.assertEqual(self.settle.records[1]["envelope"]["outcome"], "unknown")

    def test_calls_in_one_loop_run_side_by_side(self) -> None:
        async def create(n: int) -> int:
            await asyncio.sleep(0.2)
            return n

        wrapped = self.client.wrap_tool(create, effect_class="create", task_id="t", idempotency_key=lambda n: f"k-{n}")

        async def main() -> List[int]:
            return list(await asyncio.gather(*(wrapped(n) for n in range(5))))

        began = time.monotonic()
        self.assertEqual(asyncio.run(main()), [0, 1, 2, 3, 4])
        # Five calls of 0.2 s each, side by side: well under a second in all.
        self.assertLess(time.monotonic() - began, 0.9)

if __name__ == "__main__":
    unittest.main()
