"""An example agent runtime: every tool goes through Settle's wrapper, and each of source article 002 (docs/outcome-model.md)'s six
failures is played against the fake shop (the Python port of examples/agent-runtime/runtime.ts).

Every fixture is written once; `mode` says whether its tools are plain functions (run on a worker
thread, the blocking driver) or `async def` (awaited in the loop, the asyncio driver). Each fixture
says what it expects: how each run ends (the value, or the SettleError it raises), the tool calls,
the business effects, and Settle's final decision.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Type

from settle_client import (
    DecisionKind,
    DuplicateRefused,
    NeedsInput,
    PartiallyApplied,
    Settle,
    SettleError,
    intent_key,
)

from .fake_shop import FakeShop
from .shop_tools import classify_shop, shop_post, shop_probe


@dataclass
class Ended:
    """How one run of a wrapped tool ended."""

    invocation_id: str
    key: str
    value: Any = None
    error: Optional[SettleError] = None
    #: Tool calls this run made.
    calls: int = 0


@dataclass
class Expected:
    #: None: the run returns its value; else the SettleError subclass it raises.
    runs: List[Optional[Type[SettleError]]]
    calls: List[int]
    effects: int
    decisions: List[str]


@dataclass
class FixtureResult:
    name: str
    runs: List[Ended]
    effects: int
    expected: Expected

    @property
    def calls(self) -> List[int]:
        return [r.calls for r in self.runs]


class ShopRuntime:
    def __init__(self, settle: Settle, shop: FakeShop, run_tag: str, mode: str, actor: str = "agent-7", decision_timeout_s: float = 10.0) -> None:
        self.settle = settle
        self.shop = shop
        self.run_tag = run_tag
        self.mode = mode
        self.actor = actor
        self.decision_timeout_s = decision_timeout_s
        self.lock = threading.Lock()
        #: Tool calls per idempotency key (what reached the tool function, duplicates delivered by the network aside).
        self.tool_calls: Dict[str, int] = {}

    def task(self, name: str) -> str:
        return f"{name}-{self.run_tag}"

    def tool(self, path: str, name: str, effect_class: str, task: str, key: str, timeout_s: Optional[float] = None, probe: bool = True) -> Callable[..., Any]:
        """One of the shop's operations as a governed tool: guard, intent, call, classify, report, probe, decide."""
        url = self.shop.url

        def count() -> None:
            with self.lock:
                self.tool_calls[key] = self.tool_calls.get(key, 0) + 1

        def call_blocking(body: Any) -> Dict[str, Any]:
            count()
            return shop_post(url, path, body)

        async def call_async(body: Any) -> Dict[str, Any]:
            count()
            return await asyncio.to_thread(shop_post, url, path, body)

        async def probe_async(k: str) -> Any:
            return await asyncio.to_thread(shop_probe, url, k)

        is_async = self.mode == "async"
        return self.settle.wrap_tool(
            call_async if is_async else call_blocking,
            tool=name,
            effect_class=effect_class,
            task_id=task,
            idempotency_key=key,
            classify=classify_shop,
            probe=(probe_async if is_async else (lambda k: shop_probe(url, k))) if probe else None,
            timeout_s=timeout_s,
            decision_timeout_s=self.decision_timeout_s,
        )

    async def invoke(self, wrapped: Callable[..., Any], task: str, key: str, body: Any) -> Ended:
        """Runs a wrapped tool as the agent would: awaited when async, on a worker thread when blocking."""
        ended = Ended(invocation_id=f"{task}:{key}", key=key)
        # As a real agent's call would, each names what it is for (here its task): the guard sees the arguments and
        # holds a money or send call with the same arguments as an earlier one, under another key, as a possible
        # duplicate (decision 028); the blocking and the asyncio fixtures share one runtime and send the same words.
        body = {**body, "for_task": task} if isinstance(body, dict) else body
        before = self.tool_calls.get(key, 0)
        try:
            if self.mode == "async":
                ended.value = await wrapped(body)
            else:
                ended.value = await asyncio.to_thread(wrapped, body)
        except SettleError as error:
            ended.error = error
        ended.calls = self.tool_calls.get(key, 0) - before
        return ended

    def result(self, name: str, runs: List[Ended], effects: int, expected: Expected) -> FixtureResult:
        return FixtureResult(name, runs, effects, expected)

    async def kill_mid_call(self, lands: bool) -> FixtureResult:
        """1. Kill mid-call: unknown, then a probe, then ok — found, or absent and retried with the same key."""
        task = self.task("order-killed" if lands else "order-lost")
        key = intent_key(task, self.actor, "create_order", "cart-1")
        self.shop.inject(key, {"kind": "kill_mid_call", "lands": lands})
        ended = await self.invoke(self.tool("orders", "create_order", "create", task, key), task, key, {"sku": "sku-1", "quantity": 1})
        name = "1. kill mid-call, the effect landed" if lands else "1. kill mid-call, lost before the shop"
        return self.result(name, [ended], self.shop.effects(key), Expected([None], [1 if lands else 2], 1, ["do_not_retry"]))

    async def duplicate_delivery(self) -> FixtureResult:
        """2. Duplicate delivery: the network delivers the send twice, then the agent asks for it again. One message."""
        task = self.task("notify")
        key = intent_key(task, self.actor, "send_message", "customer-42", "notice-1")
        self.shop.inject(key, {"kind": "duplicate_delivery"})
        send = self.tool("messages", "send_message", "send", task, key)
        message = {"to": "customer-42", "text": "Your order has shipped."}
        first = await self.invoke(send, task, key, message)
        # The agent's own queue redelivers the step: the guard answers, the tool is not called.
        again = await self.invoke(send, task, key, message)
        return self.result("2. duplicate delivery", [first, again], self.shop.effects(key), Expected([None, DuplicateRefused], [1, 0], 1, ["do_not_retry", "do_not_retry"]))

    async def error_body_200(self) -> FixtureResult:
        """3. 200 with an error body: never ok on the status alone."""
        task = self.task("order-bad-sku")
        key = intent_key(task, self.actor, "create_order", "cart-2")
        ended = await self.invoke(self.tool("orders", "create_order", "create", task, key), task, key, {"sku": "sku-404", "quantity": 1})
        return self.result("3. 200 with an error body", [ended], self.shop.effects(key), Expected([NeedsInput], [1], 0, ["correct_input"]))

    async def slow_success(self) -> FixtureResult:
        """4. Slow success: the charge lands at 29/30 of its budget; nothing races it."""
        task = self.task("charge")
        key = intent_key(task, self.actor, "charge_card", "invoice-9")
        budget_s = 1.5
        self.shop.inject(key, {"kind": "slow", "ms": round(budget_s * 1000 * 29 / 30)})
        ended = await self.invoke(self.tool("charges", "charge_card", "money", task, key, timeout_s=budget_s), task, key, {"amount_cents": 4200})
        return self.result("4. slow success", [ended], self.shop.effects(key), Expected([None], [1], 1, ["do_not_retry"]))

    async def partial_batch(self) -> FixtureResult:
        """5. Partial batch: per-item results, then a retry scoped to the rows that may still be written, under a new key."""
        task = self.task("sheet")
        rows = ["row_11", "row_12", "row_13", "row_14", "row_15", "row_16"]
        key = intent_key(task, self.actor, "write_rows", "sheet-1", "batch")
        first = await self.invoke(self.tool("rows", "write_rows", "create", task, key), task, key, {"rows": rows})
        answer = first.error.value if isinstance(first.error, PartiallyApplied) else None
        items = (answer or {}).get("body", {}).get("items", [])
        remainder = [i["id"] for i in items if i["applied"] == "no" and i.get("retryable")]
        retry_key = intent_key(task, self.actor, "write_rows", "sheet-1", "retry-1")
        second = await self.invoke(self.tool("rows", "write_rows", "create", task, retry_key), task, retry_key, {"rows": remainder})
        effects = sum(self.shop.row_writes(row) for row in rows)
        return self.result("5. partial batch", [first, second], effects, Expected([PartiallyApplied, None], [1, 1], 5, ["wait", "do_not_retry"]))

    async def rate_limit(self) -> FixtureResult:
        """6. Rate limit with Retry-After: the next call waits for Settle's retry_allowed, which honours the header."""
        task = self.task("invoice")
        key = intent_key(task, self.actor, "create_invoice", "customer-42")
        self.shop.inject(key, {"kind": "rate_limit", "retry_after_s": 1})
        ended = await self.invoke(self.tool("invoices", "create_invoice", "create", task, key), task, key, {"customer": "customer-42", "amount_cents": 9900})
        return self.result("6. rate limit with Retry-After", [ended], self.shop.effects(key), Expected([None], [2], 1, ["do_not_retry"]))

    async def play_all(self) -> List[FixtureResult]:
        return [
            await self.kill_mid_call(True),
            await self.kill_mid_call(False),
            await self.duplicate_delivery(),
            await self.error_body_200(),
            await self.slow_success(),
            await self.partial_batch(),
            await self.rate_limit(),
        ]


def check_fixture(settle: Settle, result: FixtureResult) -> List[str]:
    """What differs from the fixture's expectation, given Settle's current decision; empty when it passed."""
    problems = []
    expected = result.expected
    ended = [type(r.error) if r.error is not None else None for r in result.runs]
    if ended != expected.runs:
        problems.append(f"runs ended {[e.__name__ if e else 'value' for e in ended]}, expected {[e.__name__ if e else 'value' for e in expected.runs]}")
    if result.calls != expected.calls:
        problems.append(f"tool calls {result.calls}, expected {expected.calls}")
    if result.effects != expected.effects:
        problems.append(f"{result.effects} business effects, expected {expected.effects}")
    decisions: List[DecisionKind] = [settle.get_decision(r.invocation_id)["decision"] for r in result.runs]
    if decisions != expected.decisions:
        problems.append(f"Settle decided {decisions}, expected {expected.decisions}")
    return problems
