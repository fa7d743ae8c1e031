"""The fixtures against a real Settle, written once for the blocking and the asyncio tools
(test_fixtures.py and test_fixtures_async.py): each of source article 002 (docs/outcome-model.md)'s six failures reaches its decision,
with one business effect per intent and no tool call repeated before a decision allowed it."""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import threading
import time
import unittest
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple

from settle_client import Abandoned, AwaitingApproval, CommittedWithoutResult, Decision, DuplicateRefused, Settle, intent_key

from .fake_shop import FakeShop
from .settle_server import SettleServer, shared_settle
from .shop_runtime import Ended, FixtureResult, ShopRuntime, check_fixture

Event = Tuple[str, str, Any]


class RecordingSettle(Settle):
    """Settle's client, keeping one timeline of the decisions the wrapper acted on."""

    def __init__(self, *args: Any, timeline: List[Event], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeline = timeline
        self.lock = threading.Lock()

    def record(self, decision: Decision) -> Decision:
        with self.lock:
            self.timeline.append(("decision", decision["invocation_id"], decision["decision"]))
        return decision

    def get_decision(self, invocation_id: str) -> Decision:
        return self.record(super().get_decision(invocation_id))

    def await_decision(self, invocation_id: str, timeout_s: float = 60.0, until: Optional[Callable[[Decision], bool]] = None) -> Decision:
        return self.record(super().await_decision(invocation_id, timeout_s, until))


def calls_without_decision(timeline: List[Event], runs: List[Ended]) -> List[str]:
    """Every call of a key after its first must follow a decision that allowed it, one call per allowance.
    Only the runs' own keys are judged: the timeline is shared by the tests of a class."""
    invocation_of = {r.key: r.invocation_id for r in runs}
    allowed, seen, problems = set(), set(), []
    for kind, subject, what in list(timeline):
        if kind == "decision":
            if what in ("retry_allowed", "proceed"):
                allowed.add(subject)
            continue
        if subject not in invocation_of:
            continue
        invocation = invocation_of[subject]
        if subject in seen and invocation not in allowed:
            problems.append(f"{invocation} called again without a decision allowing it")
        seen.add(subject)
        allowed.discard(invocation)
    return problems


def wait_for(read: Callable[[], Any], done: Callable[[Any], bool], timeout_s: float = 10) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting; last value {value}")
        time.sleep(0.05)


class FixturesAgainstSettle(unittest.TestCase):
    mode: ClassVar[str] = "sync"
    server: ClassVar[SettleServer]
    results: ClassVar[List[FixtureResult]]
    timeline: ClassVar[List[Event]]
    shop: ClassVar[FakeShop]
    settle: ClassVar[RecordingSettle]

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = shared_settle()
        cls.tag = f"{cls.mode}-{secrets.token_hex(3)}"
        cls.spool = tempfile.TemporaryDirectory(prefix="settle-py-spool-")
        cls.timeline = []
        cls.shop = FakeShop(on_call=lambda d: cls.timeline.append(("call", d["key"], d["at"])))
        cls.settle = cls.client()
        cls.results = asyncio.run(cls.runtime().play_all())

    @classmethod
    def tearDownClass(cls) -> None:
        cls.settle.close()
        cls.shop.close()
        cls.spool.cleanup()

    @classmethod
    def client(cls) -> RecordingSettle:
        return RecordingSettle(cls.server.url, cls.server.key, timeline=cls.timeline, spool_dir=cls.spool.name)

    @classmethod
    def runtime(cls, settle: Optional[Settle] = None) -> ShopRuntime:
        return ShopRuntime(settle or cls.settle, cls.shop, cls.tag, cls.mode)

    def read(self, invocation_id: str) -> Dict[str, Any]:
        result: Dict[str, Any] = self.server.api("GET", f"/api/v1/invocations/{invocation_id}")
        return result

    def act(self, invocation_id: str, action: Dict[str, Any]) -> Dict[str, Any]:
        version = self.read(invocation_id)["version"]
        result: Dict[str, Any] = self.server.api("POST", f"/api/v1/invocations/{invocation_id}/actions", {**action, "version": version}, token=self.server.token)
        return result

    def by_name(self, prefix: str) -> FixtureResult:
        return next(r for r in self.results if r.name.startswith(prefix))

    def test_the_six_fixtures_reach_their_decisions_with_one_effect_per_intent(self) -> None:
        for result in self.results:
            with self.subTest(fixture=result.name):
                self.assertEqual(check_fixture(self.settle, result), [])
        runs = [r for result in self.results for r in result.runs]
        self.assertEqual(calls_without_decision(self.timeline, runs), [])
        # One business effect per intent: no key was ever applied twice.
        for run in runs:
            self.assertLessEqual(self.shop.effects(run.key), 1, run.invocation_id)

    def test_settles_record_of_each_fixture(self) -> None:
        landed, lost = [r for r in self.results if r.name.startswith("1.")]
        inv = self.read(landed.runs[0].invocation_id)
        self.assertEqual((inv["status"], inv["commit_state"], inv["resolution"]["by"], inv["attempt_count"]), ("reconciled", "committed", "probe", 1))
        inv = self.read(lost.runs[0].invocation_id)
        self.assertEqual((inv["status"], inv["attempt_count"]), ("succeeded", 2))
        self.assertEqual(landed.runs[0].value["body"]["sku"], "sku-1")

        duplicate = self.by_name("2.")
        self.assertEqual(duplicate.runs[0].invocation_id, duplicate.runs[1].invocation_id)
        self.assertEqual((self.read(duplicate.runs[0].invocation_id)["status"], self.read(duplicate.runs[0].invocation_id)["attempt_count"]), ("succeeded", 1))
        refused = duplicate.runs[1].error
        assert isinstance(refused, DuplicateRefused)
        self.assertEqual((refused.reason, refused.commit_state, refused.next_action), ("already_committed", "committed", "none"))

        bad_sku = self.read(self.by_name("3.").runs[0].invocation_id)
        self.assertEqual((bad_sku["status"], bad_sku["commit_state"]), ("needs_input", "not_committed"))
        charge = self.read(self.by_name("4.").runs[0].invocation_id)
        self.assertEqual((charge["status"], charge["effect_class"], charge["attempt_count"]), ("succeeded", "money", 1))

        partial = self.by_name("5.")
        first = self.read(partial.runs[0].invocation_id)
        self.assertEqual((first["status"], first["commit_state"]), ("partially_applied", "partial"))
        self.assertEqual([f"{i['item_id']}:{i['applied']}" for i in first["attempts"][-1]["items"]], ["row_11:yes", "row_12:yes", "row_13:no", "row_14:yes", "row_15:no", "row_16:yes"])
        self.assertEqual([i["item_id"] for i in self.read(partial.runs[1].invocation_id)["attempts"][-1]["items"]], ["row_15"])

        rate = self.by_name("6.")
        calls = [at for kind, key, at in self.timeline if kind == "call" and key == rate.runs[0].key]
        self.assertEqual(len(calls), 2)
        self.assertGreaterEqual(calls[1] - calls[0], 1.0)

    def test_two_workers_given_the_same_intent_one_calls_and_the_other_waits_for_its_outcome(self) -> None:
        worker2 = self.client()
        self.addCleanup(worker2.close)
        task = f"two-workers-{self.tag}"
        key = intent_key(task, "agent-7", "create_invoice", "customer-3")
        self.shop.inject(key, {"kind": "slow", "ms": 300})
        runtimes = [self.runtime(), self.runtime(worker2)]
        tools = [rt.tool("invoices", "create_invoice", "create", task, key, probe=False) for rt in runtimes]

        async def both() -> List[Ended]:
            return list(await asyncio.gather(*(rt.invoke(tool, task, key, {"customer": "customer-3", "amount_cents": 100}) for rt, tool in zip(runtimes, tools))))

        runs = asyncio.run(both())
        self.assertEqual(sorted(r.calls for r in runs), [0, 1])
        made, waited = (runs[0], runs[1]) if runs[0].calls == 1 else (runs[1], runs[0])
        self.assertEqual((made.error, made.value["body"]["customer"]), (None, "customer-3"))
        assert isinstance(waited.error, DuplicateRefused)
        self.assertEqual((waited.error.reason, waited.error.commit_state), ("in_flight", "committed"))
        self.assertEqual(self.shop.effects(key), 1)
        self.assertEqual(calls_without_decision(self.timeline, runs), [])

    def test_an_unknown_outcome_without_a_probe_waits_for_a_person_who_allows_a_retry_with_the_same_key(self) -> None:
        task = f"no-probe-{self.tag}"
        key = intent_key(task, "agent-7", "create_order", "cart-9")
        self.shop.inject(key, {"kind": "kill_mid_call", "lands": False})
        runtime = self.runtime()
        runtime.decision_timeout_s = 20
        create = runtime.tool("orders", "create_order", "create", task, key, probe=False)
        invocation_id = f"{task}:{key}"
        operator = threading.Thread(target=self.reconcile_when_unknown, args=(invocation_id,))
        operator.start()
        ended = asyncio.run(runtime.invoke(create, task, key, {"sku": "sku-2", "quantity": 3}))
        operator.join()
        self.assertEqual((ended.error, ended.calls), (None, 2))
        self.assertEqual([d["key"] for d in self.shop.deliveries(key)], [key, key])
        self.assertEqual(self.shop.effects(key), 1)
        self.assertEqual(calls_without_decision(self.timeline, [ended]), [])

    def reconcile_when_unknown(self, invocation_id: str) -> None:
        wait_for(lambda: self.read_or_none(invocation_id), lambda inv: inv is not None and inv["status"] == "outcome_unknown")
        self.act(invocation_id, {"action": "mark_reconciled", "commit_state": "not_committed", "note": "no order in the shop"})

    def read_or_none(self, invocation_id: str) -> Optional[Dict[str, Any]]:
        try:
            return self.read(invocation_id)
        except OSError:
            return None

    def refund_needing_approval(self, task: str, decision_timeout_s: float) -> Tuple[Callable[..., Any], List[int]]:
        """A refund whose first call the payment service holds for approval (a Settle envelope, source article 000 (docs/outcome-model.md))."""
        calls: List[int] = []

        # Each test refunds its own order: the guard sees the arguments, and the same refund of an order already
        # refunded (another test's, in this runtime) is held as a possible duplicate (decision 028).
        def refund(cents: int, order: str) -> Dict[str, Any]:
            calls.append(cents)
            return {"held": len(calls) == 1, "refund": f"re_{len(calls)}"}

        def classify(result: Any, context: Any) -> Dict[str, Any]:
            if result.kind == "returned" and result.value["held"]:
                return {"ok": False, "code": "APPROVAL_REQUIRED", "category": "authorization", "commit_state": "not_committed", "next_action": "request_approval",
                        "retry": {"directive": "never", "not_before": None, "max_attempts_remaining": 1}, "operation_ref": task,
                        "agent_message": "Refunds over 100 EUR need a manager's approval.", "user_message": "A person is approving this refund."}
            return {"outcome": "ok", "effect_applied": "yes", "attempt_id": context.attempt_id}

        async def refund_async(cents: int, order: str) -> Dict[str, Any]:
            return refund(cents, order)

        tool = refund_async if self.mode == "async" else refund
        return self.settle.wrap_tool(tool, effect_class="money", task_id=task, idempotency_key=f"refund-{task}", classify=classify, decision_timeout_s=decision_timeout_s), calls

    def test_a_call_held_for_approval_waits_for_a_person_then_goes_ahead_with_the_same_key(self) -> None:
        task = f"approve-{self.tag}"
        refund, calls = self.refund_needing_approval(task, decision_timeout_s=20)
        invocation_id = f"{task}:refund-{task}"

        def approve() -> None:
            wait_for(lambda: self.read_or_none(invocation_id), lambda inv: inv is not None and inv["status"] == "awaiting_approval")
            self.act(invocation_id, {"action": "approve", "note": "within policy"})

        operator = threading.Thread(target=approve)
        operator.start()
        value = self.call(refund, 12000, task)
        operator.join()
        self.assertEqual((value, calls), ({"held": False, "refund": "re_2"}, [12000, 12000]))
        self.assertEqual(self.read(invocation_id)["status"], "succeeded")

    def test_a_call_nobody_approves_in_time_raises_awaiting_approval(self) -> None:
        task = f"unapproved-{self.tag}"
        refund, calls = self.refund_needing_approval(task, decision_timeout_s=1)
        with self.assertRaises(AwaitingApproval) as caught:
            self.call(refund, 12000, task)
        self.assertEqual(calls, [12000])
        self.assertEqual((caught.exception.commit_state, caught.exception.next_action, (caught.exception.decision or {}).get("status")), ("not_committed", "request_approval", "awaiting_approval"))

    def test_a_call_approved_with_edits_runs_with_the_approved_arguments_and_nothing_is_flagged(self) -> None:
        task = f"edited-{self.tag}"
        refund, calls = self.refund_needing_approval(task, decision_timeout_s=20)
        invocation_id = f"{task}:refund-{task}"
        edited = {"cents": 5000, "order": task}

        def approve() -> None:
            wait_for(lambda: self.read_or_none(invocation_id), lambda inv: inv is not None and inv["status"] == "awaiting_approval")
            self.act(invocation_id, {"action": "approve", "arguments": edited, "note": "50 EUR, as agreed"})

        operator = threading.Thread(target=approve)
        operator.start()
        value = self.call(refund, 12000, task)
        operator.join()
        self.assertEqual((value, calls), ({"held": False, "refund": "re_2"}, [12000, 5000]))
        read = self.read(invocation_id)
        self.assertEqual((read["status"], read["ran_with_other_arguments"], read["arguments_edit"]["state"], read["arguments_edit"]["arguments"]), ("succeeded", False, "approved", edited))

    def test_a_rejection_with_a_reply_raises_abandoned_with_the_reply_in_its_message(self) -> None:
        task = f"replied-{self.tag}"
        refund, calls = self.refund_needing_approval(task, decision_timeout_s=20)
        invocation_id = f"{task}:refund-{task}"
        reply = "Refund at most 50 EUR; ask the customer"

        def reject() -> None:
            wait_for(lambda: self.read_or_none(invocation_id), lambda inv: inv is not None and inv["status"] == "awaiting_approval")
            self.act(invocation_id, {"action": "reject", "reply": reply, "note": "too much"})

        operator = threading.Thread(target=reject)
        operator.start()
        with self.assertRaises(Abandoned) as caught:
            self.call(refund, 12000, task)
        operator.join()
        self.assertEqual((calls, caught.exception.reply), ([12000], reply))
        self.assertIn(f'They said: "{reply}"', str(caught.exception))
        self.assertIn(f'They said: "{reply}"', (caught.exception.envelope or {})["agent_message"])

    def call(self, wrapped: Callable[..., Any], *args: Any) -> Any:
        if self.mode == "async":
            return asyncio.run(wrapped(*args))
        return wrapped(*args)

    def test_an_operator_who_finds_the_effect_settles_it_committed_and_there_is_no_second_call(self) -> None:
        task = f"found-{self.tag}"
        key = intent_key(task, "agent-7", "send_message", "customer-7")
        self.shop.inject(key, {"kind": "kill_mid_call", "lands": True})
        runtime = self.runtime()
        runtime.decision_timeout_s = 20
        send = runtime.tool("messages", "send_message", "send", task, key, probe=False)
        invocation_id = f"{task}:{key}"

        def verify() -> None:
            wait_for(lambda: self.read_or_none(invocation_id), lambda inv: inv is not None and inv["status"] == "outcome_unknown")
            self.act(invocation_id, {"action": "request_verification"})
            self.act(invocation_id, {"action": "record_verification", "result": "found", "evidence": "message msg_1 in the outbox"})

        operator = threading.Thread(target=verify)
        operator.start()
        ended = asyncio.run(runtime.invoke(send, task, key, {"to": "customer-7", "text": "Refund issued."}))
        operator.join()
        assert isinstance(ended.error, CommittedWithoutResult)
        self.assertEqual((ended.error.commit_state, (ended.error.decision or {}).get("status"), ended.calls), ("committed", "reconciled", 1))
        self.assertEqual(len(self.shop.deliveries(key)), 1)
