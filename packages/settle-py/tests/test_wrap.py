"""wrap_tool against the fake Settle: the order of what is sent and done, that the tool is called
again only after Settle allows it, and what a run that does not commit raises."""

from __future__ import annotations

import inspect
import threading
import unittest
from typing import Any, Dict, List

import support  # noqa: F401
from settle_client import (
    CommittedWithoutResult,
    DuplicateRefused,
    InvalidInput,
    NeedsInput,
    OutcomeUnknown,
    ProbeFinding,
    RetryLater,
    SettleUnreachable,
    ToolCall,
    current_call,
    task,
)
from support.clients import make_client
from support.fake_settle import FakeSettle, SENDS_UNTIL_UNREACHABLE

OPTIONS: Dict[str, Any] = {"effect_class": "create", "task_id": "ord-1", "idempotency_key": "key-1", "tool": "create_order"}


class WrapToolTest(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = FakeSettle()
        self.addCleanup(self.settle.close)
        self.client = make_client(self, self.settle.url, sleep=lambda s: None)

    def phases(self) -> List[str]:
        return [r.get("phase", "outcome") for r in self.settle.records if r.get("phase") != "intent"]

    def test_guard_intent_call_outcome_done_with_deterministic_event_ids(self) -> None:
        calls: List[ToolCall] = []

        @self.client.tool(**OPTIONS)
        def create_order(sku: str) -> Dict[str, str]:
            calls.append(current_call())
            self.settle.log.append("tool")
            return {"id": f"order-{sku}"}

        self.assertEqual(create_order("a"), {"id": "order-a"})
        self.assertEqual(self.settle.log, ["POST guard", "post intent", "tool", "post outcome", "GET decision"])
        self.assertEqual(self.settle.requests[0]["body"], {"task_id": "ord-1", "tool": "create_order", "idempotency_key": "key-1", "effect_class": "create", "at": self.settle.requests[0]["body"]["at"], "arguments": {"sku": "a"}})
        self.assertEqual((calls[0].idempotency_key, calls[0].invocation_id, calls[0].attempt, calls[0].task_id), ("key-1", "ord-1:key-1", 1, "ord-1"))
        self.assertEqual([r["event_id"] for r in self.settle.records], ["ord-1:key-1:a1:intent", "ord-1:key-1:a1:outcome"])
        intent = self.settle.records[0]
        self.assertEqual({k: intent[k] for k in ("task_id", "tool", "effect_class", "idempotency_key", "attempt", "attempt_id")}, {"task_id": "ord-1", "tool": "create_order", "effect_class": "create", "idempotency_key": "key-1", "attempt": 1, "attempt_id": "ord-1:key-1:a1"})
        self.assertRegex(intent["at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

    def test_sends_the_arguments_by_name_with_the_intent_unless_turned_off(self) -> None:
        class Card:
            def __repr__(self) -> str:
                return "Card(****4242)"

        @self.client.tool(**OPTIONS)
        def create_order(sku: str, quantity: int = 1, card: Any = None) -> Dict[str, str]:
            return {"id": f"order-{sku}"}

        asked: List[Any] = []
        allow = self.settle.guard

        def guard(body: Dict[str, Any]) -> Any:
            asked.append(body.get("arguments"))
            return allow(body)

        self.settle.guard = guard
        create_order("a", card=Card())
        intent = self.settle.records[0]
        self.assertEqual(intent["phase"], "intent")
        self.assertEqual(intent["arguments"], {"sku": "a", "card": "Card(****4242)"})
        # The guard holds a write under a new key against the same call only if it sees the arguments.
        self.assertEqual(asked, [{"sku": "a", "card": "Card(****4242)"}])

        @self.client.tool(**{**OPTIONS, "idempotency_key": "key-2", "send_arguments": False})
        def quiet_order(sku: str) -> Dict[str, str]:
            return {"id": f"order-{sku}"}

        quiet_order("b")
        quiet_intent = [r for r in self.settle.records if r.get("phase") == "intent"][-1]
        self.assertEqual(quiet_intent["idempotency_key"], "key-2")
        self.assertNotIn("arguments", quiet_intent)
        self.assertEqual(asked[-1], None)

    def test_unknown_outcome_probe_finds_the_effect_no_second_call(self) -> None:
        calls = []

        def create() -> Dict[str, str]:
            calls.append(1)
            raise ConnectionResetError("connection reset after the request was sent")

        run = self.client.wrap_tool(create, probe=lambda key: ProbeFinding(True, {"id": "order-a"}), **OPTIONS).run()
        self.assertEqual((run.status, run.value, run.calls, (run.decision or {}).get("status")), ("done", {"id": "order-a"}, 1, "reconciled"))
        self.assertEqual(len(calls), 1)
        self.assertEqual(self.settle.records[1]["envelope"], {"outcome": "unknown", "effect_applied": "unknown", "attempt_id": "ord-1:key-1:a1", "message": "connection reset after the request was sent"})
        probe = self.settle.records[2]
        self.assertEqual((probe["phase"], probe["attempt"], probe["envelope"]["effect_applied"]), ("probe", 1, "yes"))

    def test_unknown_outcome_probe_finds_nothing_called_again_only_after_retry_allowed_with_the_same_key(self) -> None:
        keys = []

        def create() -> str:
            call = current_call()
            keys.append(call.idempotency_key)
            self.settle.log.append(f"tool a{call.attempt}")
            if call.attempt == 1:
                raise TimeoutError("timed out")
            return "order-a"

        run = self.client.wrap_tool(create, probe=lambda key: False, **OPTIONS).run()
        self.assertEqual((run.status, run.calls, run.value), ("done", 2, "order-a"))
        self.assertEqual(keys, ["key-1", "key-1"])
        second = self.settle.log.index("tool a2")
        self.assertEqual(self.settle.log[:second], ["POST guard", "post intent", "tool a1", "post outcome", "GET decision", "post probe", "GET decision", "POST guard", "post intent"])
        self.assertEqual([r["event_id"] for r in self.settle.records], ["ord-1:key-1:a1:intent", "ord-1:key-1:a1:outcome", "ord-1:key-1:a1:probe:v2", "ord-1:key-1:a2:intent", "ord-1:key-1:a2:outcome"])

    def test_unknown_outcome_without_a_probe_waits_for_a_person_then_raises_outcome_unknown(self) -> None:
        calls = []

        def create() -> None:
            calls.append(1)
            raise ConnectionResetError("504 from the proxy")

        wrapped = self.client.wrap_tool(create, decision_timeout_s=0.3, **OPTIONS)
        with self.assertRaises(OutcomeUnknown) as caught:
            wrapped()
        error = caught.exception
        self.assertEqual(len(calls), 1)
        self.assertEqual((error.invocation_id, error.commit_state, error.next_action), ("ord-1:key-1", "unknown", "verify_operation"))
        self.assertEqual((error.decision or {}).get("status"), "outcome_unknown")
        self.assertEqual((error.envelope or {}).get("code"), "OUTCOME_UNKNOWN")
        self.assertIsInstance(error.__cause__, ConnectionResetError)
        self.assertIs(error.tool_error, error.__cause__)

    def test_follows_an_operators_verdict_that_arrives_while_it_waits(self) -> None:
        calls = []

        def create() -> str:
            calls.append(1)
            if len(calls) == 1:
                raise ConnectionResetError("504")
            return "sent"

        self.settle.when(lambda s: s.status("ord-1:key-1") == "outcome_unknown", lambda: self.settle.set_decision("ord-1:key-1", status="reconciled", decision="retry_allowed", commit_state="not_committed", decided_by="ana"))
        self.assertEqual(self.client.wrap_tool(create, **OPTIONS)(), "sent")
        self.assertEqual(len(calls), 2)

    def test_the_operator_asks_to_verify_it_probes_again_even_after_a_probe_that_failed(self) -> None:
        probes = []

        def probe(key: str) -> bool:
            probes.append(key)
            if len(probes) == 1:
                raise OSError("lookup endpoint down")
            return True

        def create() -> None:
            raise ConnectionResetError("reset")

        # Once the failed probe is recorded (Settle escalates), an operator asks for another.
        self.settle.when(lambda s: s.status("ord-1:key-1") == "escalated", lambda: self.settle.set_decision("ord-1:key-1", status="verifying", decision="verify"))
        run = self.client.wrap_tool(create, probe=probe, **OPTIONS).run()
        self.assertEqual(len(probes), 2)
        self.assertEqual(self.phases(), ["outcome", "probe", "probe"])
        self.assertEqual(self.settle.records[2]["envelope"]["message"], "probe failed: lookup endpoint down")
        self.assertEqual((run.status, run.calls), ("done", 1))

    def test_committed_by_a_probe_without_a_value_raises_committed_without_result(self) -> None:
        def create() -> None:
            raise ConnectionResetError("reset")

        with self.assertRaises(CommittedWithoutResult) as caught:
            self.client.wrap_tool(create, probe=lambda key: True, **OPTIONS)()
        self.assertEqual((caught.exception.commit_state, caught.exception.next_action), ("committed", "none"))

    def test_the_guard_says_already_committed_the_tool_is_not_called(self) -> None:
        self.client.report({"event_id": "x", "task_id": "ord-1", "invocation_id": "ord-1:key-1", "tool": "create_order", "envelope": {"outcome": "ok", "effect_applied": "yes"}}).result()
        self.settle.guard = lambda body: {"allow": False, "reason": "already_committed", "invocation_id": f"{body['task_id']}:{body['idempotency_key']}"}
        calls = []
        wrapped = self.client.wrap_tool(lambda: calls.append(1), **OPTIONS)
        with self.assertRaises(DuplicateRefused) as caught:
            wrapped()
        self.assertEqual(calls, [])
        self.assertEqual((caught.exception.reason, caught.exception.commit_state, caught.exception.calls), ("already_committed", "committed", 0))

    def test_the_guard_says_in_flight_neither_tool_nor_probe_is_called(self) -> None:
        self.client.report({"event_id": "other:a1:intent", "task_id": "ord-1", "invocation_id": "ord-1:key-1", "attempt": 1, "phase": "intent", "tool": "create_order"}).result()
        self.settle.guard = lambda body: {"allow": False, "reason": "in_flight", "invocation_id": f"{body['task_id']}:{body['idempotency_key']}"}
        calls, probes = [], []
        wrapped = self.client.wrap_tool(lambda: calls.append(1), probe=lambda key: probes.append(key) or False, decision_timeout_s=0.3, **OPTIONS)
        with self.assertRaises(DuplicateRefused) as caught:
            wrapped()
        self.assertEqual((calls, probes), ([], []))
        self.assertEqual((caught.exception.reason, (caught.exception.decision or {}).get("status")), ("in_flight", "pending"))

    def test_asks_the_guard_again_before_a_retry_and_waits_when_another_worker_holds_the_key(self) -> None:
        guards = []

        def guard(body: Dict[str, Any]) -> Dict[str, Any]:
            guards.append(body)
            allow = len(guards) == 1
            return {"allow": allow, "reason": None if allow else "in_flight", "invocation_id": body.get("invocation_id") or f"{body['task_id']}:{body['idempotency_key']}"}

        self.settle.guard = guard
        calls = []

        def create() -> None:
            calls.append(1)
            raise ConnectionResetError("reset")

        with self.assertRaises(RetryLater) as caught:
            self.client.wrap_tool(create, decision_timeout_s=0.3, probe=lambda key: False, **OPTIONS)()
        self.assertEqual((len(calls), len(guards)), (1, 2))
        # The retry names its invocation, so the guard judges that one.
        self.assertEqual(guards[-1]["invocation_id"], "ord-1:key-1")
        self.assertEqual(((caught.exception.decision or {}).get("decision"), caught.exception.calls), ("retry_allowed", 1))

    def test_a_money_call_whose_intent_cannot_be_written_is_never_made(self) -> None:
        self.settle.faults += [("/api/v1/envelopes", "unreachable")] * SENDS_UNTIL_UNREACHABLE
        calls = []
        wrapped = self.client.wrap_tool(lambda: calls.append(1), **{**OPTIONS, "effect_class": "money"})
        with self.assertRaises(SettleUnreachable) as caught:
            wrapped()
        self.assertEqual(calls, [])
        self.assertEqual((caught.exception.invocation_id, caught.exception.commit_state), ("ord-1:key-1", "not_committed"))
        self.assertEqual(self.client.spooled_batches(), 0)

    def test_a_call_past_its_budget_is_recorded_unknown_told_to_stop_and_not_called_again(self) -> None:
        seen: List[ToolCall] = []
        release = threading.Event()
        self.addCleanup(release.set)

        def create() -> str:
            seen.append(current_call())
            release.wait(5)
            return "late"

        with self.assertRaises(OutcomeUnknown):
            self.client.wrap_tool(create, timeout_s=0.05, decision_timeout_s=0.1, **OPTIONS)()
        self.assertEqual(len(seen), 1)
        self.assertTrue(seen[0].cancelled.is_set())
        self.assertEqual((self.settle.records[0]["phase"], self.settle.records[0]["budget_left_s"]), ("intent", 1))
        self.assertEqual(self.settle.records[1]["envelope"]["message"], "no answer within 50 ms; the call may still complete")

    def test_an_earlier_run_used_attempt_1_so_this_run_numbers_its_attempt_2(self) -> None:
        self.client.report([
            {"event_id": "ord-1:key-1:a1:intent", "task_id": "ord-1", "invocation_id": "ord-1:key-1", "attempt": 1, "phase": "intent", "tool": "create_order"},
            {"event_id": "ord-1:key-1:a1:outcome", "task_id": "ord-1", "invocation_id": "ord-1:key-1", "attempt": 1, "tool": "create_order", "envelope": {"outcome": "retryable", "effect_applied": "no"}},
        ]).result()
        attempts = []
        self.assertEqual(self.client.wrap_tool(lambda: attempts.append(current_call().attempt) or "ok", **OPTIONS)(), "ok")
        self.assertEqual(attempts, [2])
        self.assertEqual([r["event_id"] for r in self.settle.records[2:]], ["ord-1:key-1:a2:intent", "ord-1:key-1:a2:outcome"])

    def test_a_lost_answer_to_a_post_is_resent_with_the_same_event_id_and_settle_keeps_one(self) -> None:
        self.settle.faults += [("/api/v1/envelopes", "lose_answer")] * 2
        self.assertEqual(self.client.wrap_tool(lambda: "ok", **OPTIONS)(), "ok")
        self.assertEqual([r["event_id"] for r in self.settle.records], ["ord-1:key-1:a1:intent", "ord-1:key-1:a1:outcome"])

    def test_an_input_error_is_not_committed_and_raises_needs_input_chained_to_it(self) -> None:
        self.settle_decides_correct_input()

        def create(sku: str) -> None:
            raise InvalidInput(f"SKU {sku} does not exist", field="sku")

        with self.assertRaises(NeedsInput) as caught:
            self.client.wrap_tool(create, **OPTIONS)("sku-404")
        self.assertEqual(self.settle.records[1]["envelope"], {"code": "INVALID_INPUT", "message": "SKU sku-404 does not exist", "retryable": False, "hint": "Correct the arguments and call again.", "field": "sku"})
        self.assertIsInstance(caught.exception.__cause__, InvalidInput)
        self.assertEqual(caught.exception.next_action, "correct_input")

    def settle_decides_correct_input(self) -> None:
        """The fake reads source article 002 (docs/outcome-model.md) only; a source article 001 (docs/outcome-model.md) error with a field is what Settle calls correct_input."""
        from support import fake_settle

        original = fake_settle.decide

        def decide(invocation_id: str, record: Dict[str, Any], version: int) -> Dict[str, Any]:
            if isinstance(record.get("envelope"), dict) and record["envelope"].get("field"):
                return {"invocation_id": invocation_id, "status": "needs_input", "decision": "correct_input", "commit_state": "not_committed", "reason": None, "decided_by": None, "decided_at": None, "version": version}
            return original(invocation_id, record, version)

        fake_settle.decide = decide
        self.addCleanup(setattr, fake_settle, "decide", original)

    def test_arguments_the_function_cannot_take_fail_before_anything_is_sent(self) -> None:
        wrapped = self.client.wrap_tool(lambda sku: sku, **OPTIONS)
        with self.assertRaises(TypeError):
            wrapped("a", "b")
        self.assertEqual(self.settle.requests, [])

    def test_the_task_comes_from_the_surrounding_task_block(self) -> None:
        wrapped = self.client.wrap_tool(lambda: current_call().task_id, effect_class="read", idempotency_key="k")
        with self.assertRaises(TypeError):
            wrapped()
        with task("ord-9"):
            self.assertEqual(wrapped(), "ord-9")
        self.assertEqual(self.settle.records[0]["task_id"], "ord-9")

    def test_the_wrapped_function_keeps_its_name_doc_and_signature(self) -> None:
        def create_order(sku: str, quantity: int = 1) -> str:
            """Creates an order."""
            return sku

        wrapped = self.client.tool(effect_class="create", idempotency_key=lambda sku, quantity=1: f"k-{sku}", task_id="t")(create_order)
        self.assertEqual((wrapped.__name__, wrapped.__doc__), ("create_order", "Creates an order."))
        self.assertEqual(inspect.signature(wrapped), inspect.signature(create_order))
        self.assertFalse(inspect.iscoroutinefunction(wrapped))
        self.assertEqual(self.settle.records, [])

    def test_an_interrupt_mid_call_is_reported_unknown_then_raised_again(self) -> None:
        def create() -> None:
            raise KeyboardInterrupt()

        with self.assertRaises(KeyboardInterrupt):
            self.client.wrap_tool(create, **OPTIONS)()
        self.assertEqual(self.settle.records[1]["envelope"]["outcome"], "unknown")
        self.assertEqual(self.settle.records[1]["envelope"]["message"], "interrupted: KeyboardInterrupt")


if __name__ == "__main__":
    unittest.main()
