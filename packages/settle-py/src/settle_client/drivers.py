"""Two drivers for the one sequence in steps.py: blocking, and asyncio.

Each performs what the sequence yields and sends back the answer. A `SettleError` from a request is
thrown into the sequence (it decides what Settle being away means); whatever the tool raises is
captured as its `CallResult` and classified, never thrown into the sequence.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from typing import Any, Awaitable, Callable, Dict, Optional, Protocol, Tuple

from .classify import CallResult, InvalidInput, ProbeFinding
from .errors import SettleError
from .steps import AskGuard, Call, Op, Post, Probe, ProbeOutcome, ReadDecision, Steps, ToolCall, ToolRun, WaitDecision
from .wire import Decision, GuardAnswer, GuardInput, ReportResult, SettleRecord

current: contextvars.ContextVar[ToolCall] = contextvars.ContextVar("settle_current_call")


def current_call() -> ToolCall:
    """The call being made, from inside a wrapped tool (its idempotency key, attempt, budget)."""
    try:
        return current.get()
    except LookupError:
        raise RuntimeError("current_call() is only available inside a tool wrapped by Settle") from None


class Backend(Protocol):
    """What the drivers need from the client."""

    def submit(self, record: SettleRecord, spool: bool) -> "Future[ReportResult]": ...

    def guard_body(self, body: GuardInput) -> GuardAnswer: ...

    def get_decision(self, invocation_id: str) -> Decision: ...

    def await_decision(self, invocation_id: str, timeout_s: float, until: Optional[Callable[[Decision], bool]] = None) -> Decision: ...


Args = Tuple[Tuple[Any, ...], Dict[str, Any]]


def to_finding(found: object) -> ProbeFinding[Any]:
    if isinstance(found, ProbeFinding):
        return found
    if isinstance(found, bool):
        return ProbeFinding(found)
    raise TypeError(f"a probe returns a ProbeFinding or a bool, not {type(found).__name__}")


def approved_args(fn: Callable[..., Any], approved: Dict[str, Any]) -> Args:
    """The arguments a person approved, by parameter name as the intent sent them, as the function takes them.

    A name the function has no parameter for goes to its ``**kwargs``; without one the call cannot be made as
    approved, which is `InvalidInput` before dispatch (not committed).
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return (), dict(approved)
    params = signature.parameters
    named = {name: approved[name] for name in params if name in approved}
    extra = {name: value for name, value in approved.items() if name not in params}
    var_kw = next((p.name for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    if extra and var_kw is None:
        raise InvalidInput(f"the approved arguments name what the tool does not take: {', '.join(sorted(extra))}")
    if extra and var_kw is not None:
        named[var_kw] = {**(named.get(var_kw) or {}), **extra}
    bound = inspect.BoundArguments(signature, OrderedDict((name, named[name]) for name in params if name in named))
    return tuple(bound.args), dict(bound.kwargs)


def _call_blocking(fn: Callable[..., Any], args: Args, call: ToolCall, approved: Optional[Dict[str, Any]] = None) -> CallResult[Any]:
    def invoke() -> CallResult[Any]:
        token = current.set(call)
        try:
            positional, named = approved_args(fn, approved) if approved is not None else args
            return CallResult("returned", value=fn(*positional, **named))
        except Exception as error:
            return CallResult("threw", error=error)
        except BaseException as error:
            return CallResult("interrupted", error=error)
        finally:
            current.reset(token)

    if call.timeout_s is None:
        return invoke()
    # A blocking call cannot be interrupted: it runs in a thread, and past its budget it is left to
    # finish on its own (`call.cancelled` tells it to stop), recorded as unknown because it may still land.
    box: Dict[str, CallResult[Any]] = {}
    context = contextvars.copy_context()
    worker = threading.Thread(target=lambda: box.setdefault("result", context.run(invoke)), name="settle-tool", daemon=True)
    worker.start()
    worker.join(call.timeout_s)
    if "result" in box:
        return box["result"]
    call.cancelled.set()
    return CallResult("timed_out", after_s=call.timeout_s)


def drive_blocking(steps: Steps[ToolRun[Any]], backend: Backend, fn: Callable[..., Any], args: Args, probe: Optional[Callable[[str], Any]]) -> ToolRun[Any]:
    answer: Any = None
    error: Optional[SettleError] = None
    while True:
        try:
            op = steps.throw(error) if error is not None else steps.send(answer)
        except StopIteration as stop:
            run: ToolRun[Any] = stop.value
            return run
        answer, error = None, None
        try:
            answer = _perform_blocking(op, backend, fn, args, probe)
        except SettleError as failure:
            error = failure


def _perform_blocking(op: Op, backend: Backend, fn: Callable[..., Any], args: Args, probe: Optional[Callable[[str], Any]]) -> Any:
    if isinstance(op, Post):
        return backend.submit(op.record, op.spool).result()
    if isinstance(op, AskGuard):
        return backend.guard_body(op.body)
    if isinstance(op, ReadDecision):
        return backend.get_decision(op.invocation_id)
    if isinstance(op, WaitDecision):
        return backend.await_decision(op.invocation_id, op.timeout_s, op.until)
    if isinstance(op, Call):
        return _call_blocking(fn, args, op.call, op.approved)
    return _probe_blocking(op, probe)


def _probe_blocking(op: Probe, probe: Optional[Callable[[str], Any]]) -> ProbeOutcome:
    assert probe is not None
    try:
        return to_finding(probe(op.idempotency_key)), None
    except Exception as error:
        return None, error


async def _call_async(fn: Callable[..., Awaitable[Any]], args: Args, call: ToolCall, approved: Optional[Dict[str, Any]] = None) -> CallResult[Any]:
    async def invoke() -> Any:
        current.set(call)  # the task runs in a copy of the context: this stays inside it
        positional, named = approved_args(fn, approved) if approved is not None else args
        return await fn(*positional, **named)

    task = asyncio.ensure_future(invoke())
    started = time.monotonic()
    try:
        done, _ = await asyncio.wait({task}, timeout=call.timeout_s)
    except asyncio.CancelledError as cancelled:
        # Cancel, don't orphan: the caller's task was cancelled mid-call, so the tool's is too.
        task.cancel()
        return CallResult("interrupted", error=cancelled)
    if not done:
        task.cancel()
        call.cancelled.set()
        return CallResult("timed_out", after_s=call.timeout_s or time.monotonic() - started)
    try:
        return CallResult("returned", value=task.result())
    except Exception as error:
        return CallResult("threw", error=error)
    except BaseException as error:
        return CallResult("interrupted", error=error)


async def drive_async(
    steps: Steps[ToolRun[Any]],
    backend: Backend,
    fn: Callable[..., Awaitable[Any]],
    args: Args,
    probe: Optional[Callable[[str], Any]],
) -> ToolRun[Any]:
    answer: Any = None
    error: Optional[SettleError] = None
    while True:
        try:
            op = steps.throw(error) if error is not None else steps.send(answer)
        except StopIteration as stop:
            run: ToolRun[Any] = stop.value
            return run
        answer, error = None, None
        try:
            answer = await _perform_async(op, backend, fn, args, probe)
        except SettleError as failure:
            error = failure


async def _perform_async(op: Op, backend: Backend, fn: Callable[..., Awaitable[Any]], args: Args, probe: Optional[Callable[[str], Any]]) -> Any:
    # Requests to Settle block (urllib): they run in the default executor, never on the event loop.
    if isinstance(op, Post):
        return await asyncio.wrap_future(backend.submit(op.record, op.spool))
    if isinstance(op, AskGuard):
        return await asyncio.to_thread(backend.guard_body, op.body)
    if isinstance(op, ReadDecision):
        return await asyncio.to_thread(backend.get_decision, op.invocation_id)
    if isinstance(op, WaitDecision):
        return await asyncio.to_thread(backend.await_decision, op.invocation_id, op.timeout_s, op.until)
    if isinstance(op, Call):
        return await _call_async(fn, args, op.call, op.approved)
    assert probe is not None
    try:
        found = probe(op.idempotency_key)
        if asyncio.iscoroutine(found):
            found = await found
        return to_finding(found), None
    except Exception as error:
        return None, error
