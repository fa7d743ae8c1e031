"""Approve with edits and a reply to the agent (docs/outcome-model.md §4) against the fake Settle: a decision to
proceed with approved arguments runs the tool with exactly those, by parameter name (and the intent carries them,
so Settle flags nothing); a rejection's or an escalation's reply is in what the run raises."""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, Dict, List

import support  # noqa: F401
from settle_client import Abandoned, InvalidInput, SettleError, classify_result
from support.clients import make_client
from support.fake_settle import FakeSettle

OPTIONS: Dict[str, Any] = {"effect_class": "money", "task_id": "ord-1", "idempotency_key": "key-1", "tool": "create_order"}


def held(approve_as: Any = None) -> Dict[str, Any]:
    """The tool's own answer on its first call: a request for approval (the fake approves it `as approve_as`)."""
    envelope: Dict[str, Any] = {"ok": False, "code": "APPROVAL_REQUIRED", "commit_state": "not_committed", "next_action": "request_approval", "safe_details": {}}
    if approve_as is not None:
        envelope["safe_details"]["approve_as"] = approve_as
    return envelope


def classify(result: Any, context: Any) -> Dict[str, Any]:
    if result.kind == "returned" and isinstance(result.value, dict) and result.value.get("next_action") == "request_approval":
        return dict(result.value)
    if result.kind == "threw":
        return classify_result(result, context)
    return {"outcome": "ok", "effect_applied": "yes"}


class ApproveWithEditsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = FakeSettle()
        self.addCleanup(self.settle.close)
        self.client = make_client(self, self.settle.url, sleep=lambda s: None)

    def intents(self) -> List[Any]:
        return [r.get("arguments") for r in self.settle.records if r.get("phase") == "intent"]

    def test_approved_with_edits_the_tool_runs_again_with_the_approved_arguments_which_its_intent_carries(self) -> None:
        calls: List[Any] = []

        def create_order(sku: str, quantity: int = 1) -> Any:
            calls.append((sku, quantity))
            return held({"sku": "b", "quantity": 2}) if len(calls) == 1 else {"id": f"order-{sku}-{quantity}"}

        run = self.client.wrap_tool(create_order, classify=classify, **OPTIONS).run("a", quantity=5)
        self.assertEqual(calls, [("a", 5), ("b", 2)])
        self.assertEqual((run.status, run.value, run.approved_arguments, run.reply), ("done", {"id": "order-b-2"}, {"sku": "b", "quantity": 2}, None))
        self.assertEqual(self.intents(), [{"sku": "a", "quantity": 5}, {"sku": "b", "quantity": 2}])

    def test_approved_as_called_the_tool_runs_again_with_its_own_arguments(self) -> None:
        calls: List[Any] = []

        def create_order(sku: str) -> Any:
            calls.append(sku)
            return held({}) if len(calls) == 1 else {"id": sku}

        run = self.client.wrap_tool(create_order, classify=classify, **OPTIONS).run("a")
        self.assertEqual((calls, run.status, run.approved_arguments), (["a", "a"], "done", None))

    def test_an_edited_name_goes_to_kwargs_and_one_the_tool_cannot_take_is_not_sent(self) -> None:
        seen: List[Any] = []

        def flexible(sku: str, **extra: Any) -> Any:
            seen.append((sku, extra))
            return held({"sku": "b", "ticket": "T-9"}) if len(seen) == 1 else {"id": sku}

        self.assertEqual(self.client.wrap_tool(flexible, classify=classify, **OPTIONS)("a"), {"id": "b"})
        self.assertEqual(seen, [("a", {}), ("b", {"ticket": "T-9"})])

        strict_calls: List[str] = []

        def strict(sku: str) -> Any:
            strict_calls.append(sku)
            return held({"sku": "b", "ticket": "T-9"})

        options = {**OPTIONS, "idempotency_key": "key-2"}
        # Not called as approved: an input error before dispatch (Settle reads it as not committed, correct the
        # input), never a call with other arguments.
        with self.assertRaises(SettleError) as caught:
            self.client.wrap_tool(strict, classify=classify, decision_timeout_s=0.3, **options)("a")
        self.assertEqual(strict_calls, ["a"])
        self.assertEqual(self.settle.records[-1]["envelope"]["code"], "INVALID_INPUT")
        self.assertIsInstance(caught.exception.tool_error, InvalidInput)
        self.assertIn("ticket", str(caught.exception.tool_error))

    def test_an_async_tool_runs_with_the_approved_arguments_too(self) -> None:
        calls: List[Any] = []

        async def create_order(sku: str) -> Any:
            calls.append(sku)
            return held({"sku": "b"}) if len(calls) == 1 else {"id": sku}

        value = asyncio.run(self.client.wrap_tool(create_order, classify=classify, **OPTIONS)("a"))
        self.assertEqual((value, calls), ({"id": "b"}, ["a", "b"]))

    def test_a_rejection_or_an_escalation_with_a_reply_ends_the_run_with_it(self) -> None:
        reply = "Order at most one; ask the customer"
        for key, status, decision in (("key-r", "rejected", "abandon"), ("key-e", "escalated", "wait")):
            invocation = f"ord-1:{key}"
            self.settle.when(
                lambda s, i=invocation: s.status(i) == "awaiting_approval",
                lambda i=invocation, st=status, de=decision: self.settle.set_decision(i, status=st, decision=de, reply=reply, decided_by="ana@example.com"),
            )
            run = self.client.wrap_tool(lambda sku: held(), classify=classify, decision_timeout_s=1, **{**OPTIONS, "idempotency_key": key}).run("a")
            self.assertEqual((run.status, run.reply, run.calls), ("abandoned" if status == "rejected" else "unresolved", reply, 1))

        with self.assertRaises(Abandoned) as caught:
            self.settle.when(lambda s: s.status("ord-1:key-x") == "awaiting_approval", lambda: self.settle.set_decision("ord-1:key-x", status="rejected", decision="abandon", reply=reply))
            self.client.wrap_tool(lambda sku: held(), classify=classify, **{**OPTIONS, "idempotency_key": "key-x"})("a")
        self.assertEqual(caught.exception.reply, reply)
        self.assertTrue(str(caught.exception).endswith(f'They said: "{reply}"'), str(caught.exception))


if __name__ == "__main__":
    unittest.main()
