"""`wrap_tool` / `@settle.tool`: a plain or `async def` function behind source article 002 (docs/outcome-model.md)'s sequence.

The wrapped function keeps its signature (frameworks that read it to build a tool schema see the
original), returns what the tool returned once the effect is committed, and raises a `SettleError`
subclass otherwise. `.run(...)` returns the whole `ToolRun` instead of raising.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, Iterator, Mapping, Optional, Protocol, Tuple, Type, TypeVar, Union, cast

from .classify import ClassifyContext, InvalidInput, classify_result
from .drivers import Backend, drive_async, drive_blocking
from .outcome import settle_run
from .steps import Classifier, Run, Spec, ToolRun

R = TypeVar("R")
PerCall = Union[str, Callable[..., str]]

_task: contextvars.ContextVar[str] = contextvars.ContextVar("settle_current_task")


@contextlib.contextmanager
def task(task_id: str) -> Iterator[str]:
    """Every wrapped call inside belongs to this task (the durable business goal), unless it names its own."""
    token = _task.set(task_id)
    try:
        yield task_id
    finally:
        _task.reset(token)


def current_task() -> Optional[str]:
    return _task.get(None)


class SyncTool(Protocol[R]):
    def __call__(self, *args: Any, **kwargs: Any) -> R: ...

    def run(self, *args: Any, **kwargs: Any) -> ToolRun[R]: ...


class AsyncTool(Protocol[R]):
    def __call__(self, *args: Any, **kwargs: Any) -> Awaitable[R]: ...

    def run(self, *args: Any, **kwargs: Any) -> Awaitable[ToolRun[R]]: ...


@dataclass(frozen=True)
class ToolOptions:
    effect_class: str
    #: Derived from the intent (task, actor, verb, target, slot), never from the payload (source article 002 (docs/outcome-model.md)).
    idempotency_key: PerCall
    #: Default: the `task(...)` around the call.
    task_id: Optional[PerCall] = None
    #: Default: the guard's answer, which Settle derives from the task and the key.
    invocation_id: Optional[PerCall] = None
    #: Default: the function's name.
    tool: Optional[str] = None
    #: Looks the effect up by idempotency key: a ProbeFinding or a bool. Raising means the probe failed.
    probe: Optional[Callable[[str], Any]] = None
    classify: Optional[Callable[[Any, ClassifyContext], Any]] = None
    #: Exceptions that mean the arguments were wrong, raised before dispatch: not committed.
    input_errors: Tuple[Type[BaseException], ...] = (InvalidInput,)
    #: One call's budget: past it the outcome is recorded as unknown (the call may still land).
    timeout_s: Optional[float] = None
    #: How long to wait for Settle's decision (a person may be deciding).
    decision_timeout_s: float = 60.0
    #: Tool calls one run may make, counting retries Settle allows.
    max_calls: int = 3
    guard: bool = True
    #: Send the call's arguments (by parameter name) to the guard and with its intent, so the console shows what the
    #: call was and Settle can tell the same call under a new key. Settle redacts secrets under tell-tale keys; turn
    #: it off for a tool whose arguments must not leave the process at all.
    send_arguments: bool = True


def _pick(value: PerCall, args: Tuple[Any, ...], kwargs: Dict[str, Any], what: str) -> str:
    picked = value(*args, **kwargs) if callable(value) else value
    if not isinstance(picked, str) or picked == "":
        raise TypeError(f"{what} must be a non-empty str (or a function of the tool's arguments returning one)")
    return picked


def _json_arguments(named: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The call's arguments by parameter name, each as JSON can carry it (else its repr, cut short); None when empty."""
    out: Dict[str, Any] = {}
    for name, value in named.items():
        try:
            json.dumps(value)
            out[name] = value
        except (TypeError, ValueError):
            out[name] = repr(value)[:200]
    return out or None


def wrap_tool(backend: Backend, fail_open: Callable[[str], bool], fn: Callable[..., Any], options: ToolOptions) -> Any:
    """The wrapped function (see the module's doc); `fail_open(effect_class)` is the client's policy."""
    name: str = options.tool or str(getattr(fn, "__name__", "tool"))
    is_async = inspect.iscoroutinefunction(fn)
    if options.probe is not None and not is_async and inspect.iscoroutinefunction(options.probe):
        raise TypeError(f"{name}: an async probe needs an async tool")
    try:
        signature: Optional[inspect.Signature] = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    spec = Spec(
        tool=name,
        effect_class=options.effect_class,
        classify=cast(Classifier, options.classify or classify_result),
        input_errors=options.input_errors,
        timeout_s=options.timeout_s,
        decision_timeout_s=options.decision_timeout_s,
        max_calls=options.max_calls,
        use_guard=options.guard,
        has_probe=options.probe is not None,
        fail_open=fail_open(options.effect_class),
        send_arguments=options.send_arguments,
    )

    def start(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Run:
        named: Optional[Dict[str, Any]] = None
        if signature is not None:
            # Arguments the function cannot take are a mistake before dispatch: nothing is recorded.
            bound = signature.bind(*args, **kwargs)
            named = _json_arguments(bound.arguments) if options.send_arguments else None
        task_id = _pick(options.task_id, args, kwargs, "task_id") if options.task_id is not None else current_task()
        if task_id is None:
            raise TypeError(f"{name}: no task; pass task_id= or call it inside settle_client.task(...)")
        key = _pick(options.idempotency_key, args, kwargs, "idempotency_key")
        invocation = _pick(options.invocation_id, args, kwargs, "invocation_id") if options.invocation_id is not None else None
        return Run(spec, task_id, key, invocation, named)

    if is_async:

        async def run_async(*args: Any, **kwargs: Any) -> ToolRun[Any]:
            return await drive_async(start(args, kwargs).steps(), backend, fn, (args, kwargs), options.probe)

        async def call_async(*args: Any, **kwargs: Any) -> Any:
            return settle_run(name, await run_async(*args, **kwargs))

        wrapped: Callable[..., Any] = call_async
        runner: Callable[..., Any] = run_async
    else:

        def run_blocking(*args: Any, **kwargs: Any) -> ToolRun[Any]:
            return drive_blocking(start(args, kwargs).steps(), backend, fn, (args, kwargs), options.probe)

        def call_blocking(*args: Any, **kwargs: Any) -> Any:
            return settle_run(name, run_blocking(*args, **kwargs))

        wrapped, runner = call_blocking, run_blocking
    functools.update_wrapper(wrapped, fn)
    setattr(wrapped, "run", functools.wraps(fn)(runner))
    return wrapped
