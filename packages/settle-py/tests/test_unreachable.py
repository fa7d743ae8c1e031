"""Settle cannot be reached: reads (and creates, by default) go ahead with their records spooled,
money, sends and destructive writes do not; nothing is retried without Settle, and the spool reaches
Settle when it is back."""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, Dict, List

import support  # noqa: F401
from settle_client import InvalidInput, NeedsInput, OutcomeUnknown, RetryLater, Settle, SettleUnreachable
from support.clients import free_port, make_client
from support.fake_settle import FakeSettle


class UnreachableTest(unittest.TestCase):
    def setUp(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.client = self.offline_client()

    def offline_client(self, **options: Any) -> Settle:
        return make_client(self, self.url, max_retries=1, sleep=lambda s: None, spool_retry_s=60, **options)

    def spooled(self, client: Settle) -> List[Dict[str, Any]]:
        assert client.spool is not None
        return [r for path in client.spool.pending() for r in client.spool.read(path) or []]

    def tool(self, client: Settle, effect_class: str, fn: Any, key: str = "k-1") -> Any:
        return client.wrap_tool(fn, effect_class=effect_class, task_id="t-1", idempotency_key=key, tool=f"{effect_class}_tool")

    def test_a_read_goes_ahead_and_its_intent_and_outcome_wait_in_the_spool_in_order(self) -> None:
        calls = []
        self.assertEqual(self.tool(self.client, "read", lambda: calls.append(1) or "price: 42")(), "price: 42")
        self.assertEqual(calls, [1])
        self.assertEqual([(r["event_id"], r.get("phase")) for r in self.spooled(self.client)], [("t-1:k-1:a1:intent", "intent"), ("t-1:k-1:a1:outcome", "outcome")])

    def test_a_create_goes_ahead_by_default_money_send_and_destructive_do_not(self) -> None:
        self.assertEqual(self.tool(self.client, "create", lambda: "order-1")(), "order-1")
        for effect_class in ("money", "send", "destructive"):
            with self.subTest(effect_class=effect_class):
                calls = []
                with self.assertRaises(SettleUnreachable) as caught:
                    self.tool(self.client, effect_class, lambda: calls.append(1), key=f"k-{effect_class}")()
                self.assertEqual(calls, [])
                self.assertEqual((caught.exception.commit_state, caught.exception.invocation_id), ("not_committed", f"t-1:k-{effect_class}"))
        self.assertEqual({r["effect_class"] for r in self.spooled(self.client)}, {"create"})

    def test_which_classes_go_ahead_is_configurable(self) -> None:
        client = self.offline_client(fail_open=("money",))
        self.assertEqual(self.tool(client, "money", lambda: "charged")(), "charged")
        with self.assertRaises(SettleUnreachable):
            self.tool(client, "read", lambda: "price", key="k-2")()

    def test_without_settle_a_failure_is_never_retried_and_raises_what_the_client_can_tell(self) -> None:
        calls = []

        def reset() -> None:
            calls.append(1)
            raise ConnectionResetError("reset after sending")

        with self.assertRaises(OutcomeUnknown) as unknown:
            self.tool(self.client, "create", reset)()
        self.assertEqual((unknown.exception.commit_state, unknown.exception.calls, unknown.exception.decision), ("unknown", 1, None))
        self.assertIn("Settle could not be reached", str(unknown.exception))
        with self.assertRaises(RetryLater):
            self.tool(self.client, "read", reset, key="k-2")()
        with self.assertRaises(NeedsInput):
            self.tool(self.client, "create", lambda: (_ for _ in ()).throw(InvalidInput("no such SKU", field="sku")), key="k-3")()
        self.assertEqual(len(calls), 2)

    def test_an_async_read_goes_ahead_too(self) -> None:
        async def price() -> int:
            await asyncio.sleep(0)
            return 42

        self.assertEqual(asyncio.run(self.tool(self.client, "read", price)()), 42)
        self.assertEqual(len(self.spooled(self.client)), 2)

    def test_when_settle_is_back_the_spool_reaches_it(self) -> None:
        self.tool(self.client, "create", lambda: "order-1")()
        settle = FakeSettle(port=self.port)
        self.addCleanup(settle.close)
        self.assertTrue(self.client.drain_spool())
        self.assertEqual([r["event_id"] for r in settle.records], ["t-1:k-1:a1:intent", "t-1:k-1:a1:outcome"])
        self.assertEqual(self.client.spooled_batches(), 0)
        # Settle is back: the next call is guarded again.
        self.assertEqual(self.tool(self.client, "create", lambda: "order-2", key="k-2")(), "order-2")
        self.assertEqual(settle.log[-4:], ["POST guard", "post intent", "post outcome", "GET decision"])


if __name__ == "__main__":
    unittest.main()
