"""The classification table (source article 002 (docs/outcome-model.md)): what each way a call can end becomes, for a read and a write."""

from __future__ import annotations

import asyncio
import http.client
import io
import socket
import unittest
import urllib.error
from email.message import Message
from typing import Any, Dict, Optional

import support  # noqa: F401
from settle_client import CallResult, ClassifyContext, InvalidInput, NotDispatched, ProbeFinding, classify_result, intent_key, probe_envelope
from settle_client.classify import read_locally


def context(effect_class: str = "create", **extra: Any) -> ClassifyContext:
    return ClassifyContext(tool="create_order", effect_class=effect_class, attempt=2, attempt_id="inv:a2", **extra)


def http_error(code: int, reason: str, retry_after: Optional[str] = None) -> urllib.error.HTTPError:
    headers = Message()
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    return urllib.error.HTTPError("http://shop.test/orders", code, reason, headers, io.BytesIO(b""))


def outcome(result: CallResult[Any], effect_class: str = "create") -> Dict[str, Any]:
    return classify_result(result, context(effect_class))


class ClassifyTableTest(unittest.TestCase):
    def test_a_returned_value_is_ok_and_applied(self) -> None:
        for effect_class in ("read", "create", "send", "money", "destructive"):
            self.assertEqual(outcome(CallResult("returned", value={"id": 1}), effect_class), {"outcome": "ok", "effect_applied": "yes", "attempt_id": "inv:a2"})

    def test_after_dispatch_a_timeout_or_a_reset_of_a_write_is_unknown_and_of_a_read_retryable(self) -> None:
        after_dispatch = [
            TimeoutError("timed out"),
            socket.timeout("timed out"),
            asyncio.TimeoutError(),
            ConnectionResetError("[Errno 104] Connection reset by peer"),
            http.client.RemoteDisconnected("Remote end closed connection without response"),
            BrokenPipeError("broken pipe"),
            urllib.error.URLError(socket.timeout("timed out")),
            http.client.IncompleteRead(b"partial"),
            # No evidence the request was never sent (an earlier request of the tool may have landed).
            ConnectionRefusedError("refused"),
            RuntimeError("anything else"),
        ]
        for error in after_dispatch:
            with self.subTest(error=type(error).__name__):
                for effect_class in ("create", "send", "money", "destructive"):
                    self.assertEqual(outcome(CallResult("threw", error=error), effect_class)["outcome"], "unknown")
                    self.assertEqual(outcome(CallResult("threw", error=error), effect_class)["effect_applied"], "unknown")
                read = outcome(CallResult("threw", error=error), "read")
                self.assertEqual((read["outcome"], read["effect_applied"]), ("retryable", "no"))

    def test_the_message_says_what_the_tool_said_or_its_type(self) -> None:
        self.assertEqual(outcome(CallResult("threw", error=ConnectionResetError("reset by peer")))["message"], "reset by peer")
        self.assertEqual(outcome(CallResult("threw", error=TimeoutError()))["message"], "TimeoutError")
        self.assertEqual(len(outcome(CallResult("threw", error=RuntimeError("x" * 2000)))["message"]), 500)

    def test_past_the_budget_is_unknown_for_a_write(self) -> None:
        self.assertEqual(
            outcome(CallResult("timed_out", after_s=1.5)),
            {"outcome": "unknown", "effect_applied": "unknown", "attempt_id": "inv:a2", "message": "no answer within 1500 ms; the call may still complete"},
        )
        self.assertEqual(outcome(CallResult("timed_out", after_s=1.5), "read")["outcome"], "retryable")

    def test_an_input_error_is_not_committed_correct_the_input_for_every_class(self) -> None:
        for effect_class in ("read", "create", "money"):
            envelope = outcome(CallResult("threw", error=InvalidInput("quantity must be positive", field="quantity")), effect_class)
            self.assertEqual(envelope, {"code": "INVALID_INPUT", "message": "quantity must be positive", "retryable": False, "hint": "Correct the arguments and call again.", "field": "quantity"})
            self.assertEqual(read_locally(envelope, effect_class).__dict__, {"commit_state": "not_committed", "next_action": "correct_input"})

    def test_registered_input_errors_count_and_plain_value_errors_do_not(self) -> None:
        # json.JSONDecodeError (a ValueError) after a POST says nothing about whether the write landed.
        self.assertEqual(classify_result(CallResult("threw", error=ValueError("bad")), context())["outcome"], "unknown")
        envelope = classify_result(CallResult("threw", error=ValueError("bad")), context(input_errors=(ValueError,)))
        self.assertEqual((envelope["field"], envelope["retryable"]), ("arguments", False))

    def test_not_dispatched_is_not_committed_and_retryable(self) -> None:
        envelope = outcome(CallResult("threw", error=NotDispatched("connection refused before the only request", retry_after_s=5)), "money")
        self.assertEqual(envelope, {"outcome": "retryable", "effect_applied": "no", "attempt_id": "inv:a2", "message": "connection refused before the only request", "retry_after_s": 5})

    def test_an_http_error_status_is_the_receivers_answer_read_by_its_status(self) -> None:
        problem = outcome(CallResult("threw", error=http_error(429, "Too Many Requests", "2")))
        self.assertEqual(problem, {"type": "about:blank", "title": "Too Many Requests", "status": 429, "detail": "HTTP 429 Too Many Requests", "retry_after": 2})
        table = {400: ("not_committed", "correct_input"), 422: ("not_committed", "correct_input"), 403: ("not_committed", "escalate"), 404: ("not_committed", "choose_alternative"), 429: ("not_committed", "wait_and_retry"), 408: ("unknown", "verify_operation"), 500: ("unknown", "verify_operation"), 503: ("unknown", "verify_operation")}
        for status, expected in table.items():
            with self.subTest(status=status):
                reading = read_locally(outcome(CallResult("threw", error=http_error(status, "x"))), "create")
                self.assertEqual((reading.commit_state, reading.next_action), expected)
        self.assertEqual(read_locally(outcome(CallResult("threw", error=http_error(503, "x")), "read"), "read").commit_state, "not_committed")

    def test_an_interrupted_write_is_unknown(self) -> None:
        self.assertEqual(outcome(CallResult("interrupted", error=KeyboardInterrupt()))["message"], "interrupted: KeyboardInterrupt")

    def test_probe_envelopes(self) -> None:
        self.assertEqual(probe_envelope(ProbeFinding(True)), {"outcome": "ok", "effect_applied": "yes", "message": "found by idempotency key"})
        self.assertEqual(probe_envelope(ProbeFinding(False)), {"outcome": "ok", "effect_applied": "no", "message": "not found by idempotency key"})
        self.assertEqual(probe_envelope(None, OSError("down")), {"outcome": "unknown", "effect_applied": "unknown", "message": "probe failed: down"})

    def test_the_intent_key_is_seed_002s_and_the_same_as_the_typescript_runtimes(self) -> None:
        # node -e: createHash("sha256").update("ord-7741|agent-7|create_order|cart-1|").digest("hex").slice(0, 32), runtime.ts's intentKey.
        self.assertEqual(intent_key("ord-7741", "agent-7", "create_order", "cart-1"), "c8ca9ee2e9cd54ca8f45b4a29e4d18ee")
        self.assertNotEqual(intent_key("t", "a", "send", "c", "notice-1"), intent_key("t", "a", "send", "c", "notice-2"))
        self.assertEqual(len(intent_key("t", "a", "v", "x")), 32)


if __name__ == "__main__":
    unittest.main()
