"""Verifier workers against the stand-in Settle: asks handed out once, answered with the most specific
verifier's finding; a verifier that raises, hangs or is missing answers "could not tell"; closed asks are
skipped; Settle being away is retried; a refused key stops the loop. Sync and asyncio."""

from __future__ import annotations

import asyncio
import threading
import time
import unittest
from typing import Any, Dict, List, Tuple

import support  # noqa: F401
from settle_client import Finding, SettleError
from support.clients import make_client
from support.fake_settle import FakeSettle


def ask(n: int, tool: str = "create_refund") -> Dict[str, Any]:
    return {
        "id": f"00000000-0000-4000-8000-00000000000{n}",
        "invocation_id": f"inv-{n}",
        "task_id": "t1",
        "tool": tool,
        "effect_class": "money",
        "idempotency_key": f"key-{n}",
        "arguments": {"amount": n},
        "first_dispatched_at": "2026-12-04T00:00:00.000Z",
        "try": 1,
        "max_tries": 3,
        "lease_expires_at": "2026-12-04T00:10:00.000Z",
    }


class VerifierTest(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = FakeSettle(hold_s=0.05)
        self.addCleanup(self.settle.close)
        self.client = make_client(self, self.settle.url, spool=False, sleep=lambda s: None, max_retries=1)
        self.events: List[Tuple[str, Dict[str, Any]]] = []

    def serve_until(self, done: Any, **options: Any) -> None:
        stop = threading.Event()

        def tell(kind: str, details: Dict[str, Any]) -> None:
            self.events.append((kind, details))
            if done():
                stop.set()

        thread = threading.Thread(target=self.client.serve_verifications, args=(stop,), kwargs={"wait_s": 1, "worker": "py-1", "on_event": tell, **options}, daemon=True)
        thread.start()
        thread.join(10)
        stop.set()
        self.assertFalse(thread.is_alive(), "the loop did not stop")

    def answers(self) -> Dict[str, Dict[str, Any]]:
        return {k[-1]: v for k, v in self.settle.answers.items()}

    def test_each_ask_gets_the_most_specific_verifiers_finding(self) -> None:
        self.settle.asks = [ask(1), ask(2, "send_email"), ask(3, "create_invoice")]

        @self.client.verifier("create_*")
        def any_create(item: Dict[str, Any]) -> Finding:
            return Finding(False, "no invoice")

        @self.client.verifier("create_refund")
        def refund(item: Dict[str, Any]) -> Dict[str, Any]:
            return {"found": True, "evidence": f"refund for {item['idempotency_key']}", "ref": "re_1"}

        @self.client.verifier("send_*")
        async def sent(item: Dict[str, Any]) -> Dict[str, Any]:
            return {"found": None}

        self.serve_until(lambda: len(self.settle.answers) == 3)
        self.assertEqual(
            self.answers(),
            {
                "1": {"found": True, "evidence": "refund for key-1", "ref": "re_1"},
                "2": {"found": None, "evidence": None, "ref": None},
                "3": {"found": False, "evidence": "no invoice", "ref": None},
            },
        )
        polls = [r["path"] for r in self.settle.requests if r["path"].startswith("/api/v1/verifications?")]
        self.assertIn("worker=py-1", polls[0])

    def test_raising_hanging_or_missing_verifiers_answer_could_not_tell(self) -> None:
        self.settle.asks = [ask(1), ask(2, "get_thing"), ask(3, "create_hang")]

        @self.client.verifier("create_refund")
        def broken(item: Dict[str, Any]) -> Dict[str, Any]:
            raise RuntimeError("refunds API answered 503")

        @self.client.verifier("create_hang")
        def hangs(item: Dict[str, Any]) -> Dict[str, Any]:
            time.sleep(5)
            return {"found": True}

        self.serve_until(lambda: len(self.settle.answers) == 3, timeout_s=0.1)
        self.assertEqual(
            {k: (v["found"], v["evidence"]) for k, v in self.answers().items()},
            {
                "1": (None, "the verifier failed: refunds API answered 503"),
                "2": (None, "no verifier registered for get_thing in this worker"),
                "3": (None, "the verifier took longer than 0.1 s"),
            },
        )

    def test_evidence_is_clipped_to_4_kib(self) -> None:
        self.settle.asks = [ask(1)]
        self.client.verifier("create_refund")(lambda item: {"found": True, "evidence": "x" * 10_000})
        self.serve_until(lambda: len(self.settle.answers) == 1)
        self.assertEqual(len(self.answers()["1"]["evidence"]), 4096)

    def test_a_closed_ask_is_reported_and_skipped(self) -> None:
        self.settle.asks = [ask(1), ask(2)]
        self.settle.refuse_answers[ask(1)["id"]] = 409
        self.client.verifier("create_refund")(lambda item: {"found": True})
        self.serve_until(lambda: len(self.events) == 2)
        refused = [d for kind, d in self.events if kind == "refused"]
        self.assertEqual(refused[0]["error"].code, "VERIFICATION_CLOSED")
        self.assertEqual(list(self.answers()), ["2"])

    def test_settle_away_is_retried_then_work_goes_on_and_a_refused_key_stops_the_loop(self) -> None:
        self.settle.asks = [ask(1)]
        self.settle.faults = [("/api/v1/verifications", "unavailable")] * 4
        self.client.verifier("create_refund")(lambda item: {"found": True})
        self.serve_until(lambda: len(self.settle.answers) == 1)
        self.assertTrue(any(kind == "poll_failed" for kind, _ in self.events))
        self.assertEqual(list(self.answers()), ["1"])

        self.settle.faults = [("/api/v1/verifications", "unauthorized")]
        with self.assertRaises(SettleError) as raised:
            self.client.serve_verifications(threading.Event(), wait_s=0, on_event=lambda k, d: None)
        self.assertEqual(raised.exception.status, 401)


class AsyncVerifierTest(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = FakeSettle(hold_s=0.05)
        self.addCleanup(self.settle.close)
        self.client = make_client(self, self.settle.url, spool=False, sleep=lambda s: None, max_retries=1)

    def test_async_and_plain_verifiers_answer_and_the_loop_stops_on_its_event(self) -> None:
        self.settle.asks = [ask(1), ask(2, "create_invoice"), ask(3, "create_slow")]

        @self.client.verifier("create_refund")
        async def refund(item: Dict[str, Any]) -> Dict[str, Any]:
            await asyncio.sleep(0.01)
            return {"found": True, "ref": "re_1"}

        @self.client.verifier("create_invoice")
        def invoice(item: Dict[str, Any]) -> Finding:
            return Finding(False, "none")

        @self.client.verifier("create_slow")
        async def slow(item: Dict[str, Any]) -> Dict[str, Any]:
            await asyncio.sleep(5)
            return {"found": True}

        async def main() -> float:
            stop = asyncio.Event()

            def tell(kind: str, details: Dict[str, Any]) -> None:
                if len(self.settle.answers) == 3:
                    stop.set()

            started = time.monotonic()
            await asyncio.wait_for(self.client.serve_verifications_async(stop, wait_s=1, timeout_s=0.2, on_event=tell), 10)
            return time.monotonic() - started

        elapsed = asyncio.run(main())
        self.assertLess(elapsed, 5)
        answers = {k[-1]: (v["found"], v["evidence"]) for k, v in self.settle.answers.items()}
        self.assertEqual(answers, {"1": (True, None), "2": (False, "none"), "3": (None, "the verifier took longer than 0.2 s")})


if __name__ == "__main__":
    unittest.main()
