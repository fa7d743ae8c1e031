"""`Settle`: the client a runtime keeps for its life (report, guard, decisions, wrapped tools)."""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
import weakref
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Optional, Tuple, TypeVar, Union, cast, overload

from .batcher import Batcher
from .decisions import DecisionOptions, await_decision, get_decision
from .http import HttpOptions, request
from .spool import Drainer, Spool, default_spool_dir, spool_namespace
from .wire import Decision, GuardAnswer, GuardInput, RecordResult, ReportResult, SettleRecord
from .verifiers import FindingLike, OnEvent, Verifier, Verifiers
from .wrap import AsyncTool, PerCall, SyncTool, ToolOptions, wrap_tool

R = TypeVar("R")

MAX_BATCH = 500
# Settle refuses bodies over 1 MiB; leave room for the wrapper and rounding.
MAX_BATCH_BYTES = 1_000_000
#: Without Settle's guard, these go ahead; money, destructive writes and sends wait (source article 002 (docs/outcome-model.md)'s table:
#: a duplicate read is harmless and a create carries a key the receiver dedupes; the rest is at most once).
DEFAULT_FAIL_OPEN = ("read", "create")


class Settle:
    """A client for one Settle and one runtime key.

    `url` and `key` default to SETTLE_URL and SETTLE_KEY. Reports are batched by a background thread
    and flushed when the interpreter exits; batches Settle cannot take are kept in the spool
    (`spool_dir`, default SETTLE_SPOOL_DIR or ~/.settle/spool) and sent when it can.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        key: Optional[str] = None,
        *,
        batch_size: int = 100,
        batch_delay_s: float = 0.01,
        max_retries: int = 5,
        timeout_s: float = 15.0,
        poll_wait_s: int = 30,
        spool: bool = True,
        spool_dir: Optional[Union[str, Path]] = None,
        spool_retry_s: float = 5.0,
        fail_open: Iterable[str] = DEFAULT_FAIL_OPEN,
        exit_timeout_s: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        resolved_url = url or os.environ.get("SETTLE_URL")
        resolved_key = key or os.environ.get("SETTLE_KEY")
        if not resolved_url or not resolved_key:
            raise ValueError("Settle needs a url and a runtime key: pass url= and key=, or set SETTLE_URL and SETTLE_KEY")
        self.url = resolved_url.rstrip("/")
        self.fail_open_classes = frozenset(fail_open)
        self.exit_timeout_s = exit_timeout_s
        self._http = HttpOptions(url=self.url, key=resolved_key, max_retries=max_retries, timeout_s=timeout_s, sleep=sleep)
        self._decisions = DecisionOptions(poll_wait_s=poll_wait_s)
        self._verifiers = Verifiers(self._http)
        self.spool: Optional[Spool] = None
        self._drainer: Optional[Drainer] = None
        if spool:
            directory = Path(spool_dir) if spool_dir else default_spool_dir()
            self.spool = Spool(directory / spool_namespace(self.url, resolved_key))
            self._drainer = Drainer(self.spool, self._send_spooled, retry_s=spool_retry_s)
        self._batcher = Batcher(
            send=self._send_batch,
            keep=self._keep if self.spool is not None else None,
            on_sent=self._settle_answered,
            batch_size=min(max(batch_size, 1), MAX_BATCH),
            max_bytes=MAX_BATCH_BYTES,
            delay_s=batch_delay_s,
        )
        self._closed = False
        # Batches an earlier process left behind are sent now.
        if self.spool is not None and self.spool.pending() and self._drainer is not None:
            self._drainer.start()
        atexit.register(_close_at_exit, weakref.ref(self))

    def _send_batch(self, records: List[SettleRecord]) -> Tuple[List[RecordResult], bool]:
        answer = request(self._http, "POST", "/api/v1/envelopes", {"records": records})
        body = answer.body if isinstance(answer.body, dict) else {}
        return cast(List[RecordResult], body.get("results") or []), answer.resent

    def _send_spooled(self, records: List[SettleRecord]) -> List[RecordResult]:
        # One try each time: the drainer itself backs off while Settle is away.
        answer = request(self._http, "POST", "/api/v1/envelopes", {"records": records}, timeout_s=min(self._http.timeout_s, 10.0), max_retries=0)
        body = answer.body if isinstance(answer.body, dict) else {}
        return cast(List[RecordResult], body.get("results") or [])

    def _keep(self, records: List[SettleRecord]) -> None:
        assert self.spool is not None and self._drainer is not None
        self.spool.write(records)
        # Closing sends the spool itself (and at interpreter exit no thread may start).
        if not self._closed:
            self._drainer.start(wait_first=True)

    def _settle_answered(self) -> None:
        if self._drainer is not None:
            self._drainer.wake()

    def submit(self, record: SettleRecord, spool: bool = True) -> "Future[ReportResult]":
        """Queues one record; `spool=False` makes Settle being away an error instead of a spooled record."""
        return self._batcher.add([record], spool=spool)[0]

    @overload
    def report(self, records: SettleRecord) -> "Future[ReportResult]": ...

    @overload
    def report(self, records: List[SettleRecord]) -> "Future[List[ReportResult]]": ...

    def report(self, records: Union[SettleRecord, List[SettleRecord]]) -> "Union[Future[ReportResult], Future[List[ReportResult]]]":
        """Queues records for Settle (batched). The future resolves with each record's result once its
        request is answered, or `spooled` when Settle could not be reached."""
        if isinstance(records, dict):
            return self.submit(records)
        futures = self._batcher.add(list(records))
        return _gather(futures)

    def flush(self, timeout_s: Optional[float] = None) -> bool:
        """Sends every queued record now; True once all are answered or spooled."""
        return self._batcher.flush(timeout_s)

    def spooled_batches(self) -> int:
        """Batches waiting in the spool for Settle."""
        return len(self.spool.pending()) if self.spool is not None else 0

    def drain_spool(self, timeout_s: float = 10.0) -> bool:
        """Sends the spool now; True when it is empty."""
        if self._drainer is None:
            return True
        return self._drainer.drain_once(time.monotonic() + timeout_s)

    def close(self, timeout_s: Optional[float] = None) -> None:
        """Sends what is queued (or spools it) and stops the background threads."""
        if self._closed:
            return
        self._closed = True
        budget = self.exit_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + budget
        self._batcher.close(budget)
        if self._drainer is not None:
            self._drainer.stop()
            self._drainer.drain_once(deadline)

    def guard(
        self,
        task_id: str,
        tool: str,
        idempotency_key: str,
        *,
        effect_class: Optional[str] = None,
        invocation_id: Optional[str] = None,
        at: Optional[str] = None,
    ) -> GuardAnswer:
        """Asks before a write (POST /api/v1/guard); an allowed answer has recorded the intent."""
        body: GuardInput = {"task_id": task_id, "tool": tool, "idempotency_key": idempotency_key}
        if invocation_id is not None:
            body["invocation_id"] = invocation_id
        if effect_class is not None:
            body["effect_class"] = effect_class
        if at is not None:
            body["at"] = at
        return self.guard_body(body)

    def guard_body(self, body: GuardInput) -> GuardAnswer:
        return cast(GuardAnswer, request(self._http, "POST", "/api/v1/guard", body).body)

    def get_decision(self, invocation_id: str) -> Decision:
        return get_decision(self._http, invocation_id)

    def await_decision(self, invocation_id: str, timeout_s: float = 60.0, until: Optional[Callable[[Decision], bool]] = None) -> Decision:
        """Long-polls (ETag, If-None-Match) until the decision is no longer `wait`, or `until` holds,
        or `timeout_s` pass; then returns the last decision read."""
        return await_decision(self._http, self._decisions, invocation_id, timeout_s, until)

    def verifier(self, tool: str) -> Callable[[Verifier], Verifier]:
        """Registers the read that tells whether a call of `tool` took effect (decorator; plain or async):
        `@settle.verifier("create_refund")` over `def check(item): return {"found": True, "evidence": "re_1"}`."""
        return self._verifiers.verifier(tool)

    def serve_verifications(
        self,
        stop: Optional[threading.Event] = None,
        *,
        wait_s: int = 30,
        concurrency: int = 4,
        timeout_s: float = 20.0,
        worker: Optional[str] = None,
        on_event: Optional[OnEvent] = None,
    ) -> None:
        """Answers Settle's asks with the registered verifiers until `stop` is set (see settle_client.verifiers)."""
        self._verifiers.serve_verifications(stop, wait_s=wait_s, concurrency=concurrency, timeout_s=timeout_s, worker=worker, on_event=on_event)

    async def serve_verifications_async(
        self,
        stop: Optional["asyncio.Event"] = None,
        *,
        wait_s: int = 30,
        concurrency: int = 4,
        timeout_s: float = 20.0,
        worker: Optional[str] = None,
        on_event: Optional[OnEvent] = None,
    ) -> None:
        """The same loop on asyncio, for async verifiers; stops when `stop` is set or the task is cancelled."""
        await self._verifiers.serve_verifications_async(stop, wait_s=wait_s, concurrency=concurrency, timeout_s=timeout_s, worker=worker, on_event=on_event)

    def take_verifications(self, wait_s: int = 0, limit: int = 10, worker: Optional[str] = None) -> List[Dict[str, Any]]:
        """Takes up to `limit` of this runtime's asks, each leased to this worker."""
        return self._verifiers.take_verifications(wait_s, limit, worker)

    def answer_verification(self, ask_id: str, finding: FindingLike) -> Dict[str, Any]:
        """Answers one ask; a closed one raises SettleError (409)."""
        return self._verifiers.answer_verification(ask_id, finding)

    def fails_open(self, effect_class: str) -> bool:
        """Whether a call of this class goes ahead when Settle cannot be reached before it."""
        return effect_class in self.fail_open_classes

    def wrap_tool(self, fn: Callable[..., Any], **options: Any) -> Any:
        """`fn` behind source article 002 (docs/outcome-model.md)'s sequence; the options are those of `tool()`."""
        return wrap_tool(self, self.fails_open, fn, ToolOptions(**options))

    def tool(
        self,
        *,
        effect_class: str,
        idempotency_key: PerCall,
        task_id: Optional[PerCall] = None,
        invocation_id: Optional[PerCall] = None,
        tool: Optional[str] = None,
        probe: Optional[Callable[[str], Any]] = None,
        classify: Optional[Callable[..., Any]] = None,
        input_errors: Optional[Tuple[type, ...]] = None,
        timeout_s: Optional[float] = None,
        decision_timeout_s: float = 60.0,
        max_calls: int = 3,
        guard: bool = True,
        send_arguments: bool = True,
    ) -> "_Decorator":
        """A decorator: `@settle.tool(effect_class="create", idempotency_key=lambda order: ...)`."""
        options = ToolOptions(
            effect_class=effect_class,
            idempotency_key=idempotency_key,
            task_id=task_id,
            invocation_id=invocation_id,
            tool=tool,
            probe=probe,
            classify=classify,
            timeout_s=timeout_s,
            decision_timeout_s=decision_timeout_s,
            max_calls=max_calls,
            guard=guard,
            send_arguments=send_arguments,
            **({"input_errors": input_errors} if input_errors is not None else {}),
        )
        return _Decorator(self, options)


class _Decorator:
    def __init__(self, client: Settle, options: ToolOptions) -> None:
        self.client = client
        self.options = options

    # An async function is also a function returning an awaitable: the first match is the right one.
    @overload
    def __call__(self, fn: Callable[..., Awaitable[R]]) -> AsyncTool[R]: ...  # type: ignore[misc]

    @overload
    def __call__(self, fn: Callable[..., R]) -> SyncTool[R]: ...

    def __call__(self, fn: Callable[..., Any]) -> Any:
        return wrap_tool(self.client, self.client.fails_open, fn, self.options)


def _gather(futures: List["Future[ReportResult]"]) -> "Future[List[ReportResult]]":
    combined: "Future[List[ReportResult]]" = Future()
    left = [len(futures)]
    lock = threading.Lock()

    def one_done(_: "Future[ReportResult]") -> None:
        with lock:
            left[0] -= 1
            if left[0] > 0:
                return
        failed = next((f.exception() for f in futures if f.exception() is not None), None)
        if failed is not None:
            combined.set_exception(failed)
        else:
            combined.set_result([f.result() for f in futures])

    if not futures:
        combined.set_result([])
    for future in futures:
        future.add_done_callback(one_done)
    return combined


def _close_at_exit(ref: "weakref.ReferenceType[Settle]") -> None:
    client = ref()
    if client is not None:
        try:
            client.close()
        except Exception:  # at exit nobody can act on it but the log; the spool keeps what it could
            logging.getLogger("settle_client").exception("settle_client: closing at exit failed")
