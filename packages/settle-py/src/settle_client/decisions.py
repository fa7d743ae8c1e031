"""Reading Settle's decision on an invocation (docs/outcome-model.md §5).

Waiting uses the endpoint's long poll (`?wait=`) with the last ETag, so an unchanged decision costs
one held request, not a stream of polls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional, Tuple, cast

from .http import HttpOptions, quote_id, request
from .wire import Decision


@dataclass
class DecisionOptions:
    #: Longest hold asked of the server per request (Settle holds at most 60 s).
    poll_wait_s: int = 30
    #: A poll answered sooner than this with nothing new is followed by a pause this long (a server that does not hold).
    min_poll_s: float = 0.5
    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


def _path(invocation_id: str, wait_s: int) -> str:
    return f"/api/v1/invocations/{quote_id(invocation_id)}/decision" + (f"?wait={wait_s}" if wait_s > 0 else "")


def read_decision(http: HttpOptions, invocation_id: str, wait_s: int, etag: Optional[str]) -> Tuple[Optional[Decision], Optional[str]]:
    """One read; the decision is None when the server answered 304 (unchanged since `etag`)."""
    answer = request(
        http,
        "GET",
        _path(invocation_id, wait_s),
        headers={"If-None-Match": etag} if etag else {},
        timeout_s=http.timeout_s + wait_s,
    )
    decision = None if answer.status == 304 else cast(Decision, answer.body)
    return decision, answer.headers.get("etag", etag)


def get_decision(http: HttpOptions, invocation_id: str) -> Decision:
    decision, _ = read_decision(http, invocation_id, 0, None)
    return cast(Decision, decision)


def await_decision(
    http: HttpOptions,
    options: DecisionOptions,
    invocation_id: str,
    timeout_s: float,
    until: Optional[Callable[[Decision], bool]] = None,
) -> Decision:
    """Waits until `until` holds (default: the decision is no longer `wait`) or `timeout_s` pass.

    When the time runs out, the last decision read is returned, whatever it is.
    """
    reached = until or (lambda d: d["decision"] != "wait")
    deadline = options.now() + timeout_s
    current, etag = read_decision(http, invocation_id, 0, None)
    decision = cast(Decision, current)

    while not reached(decision):
        remaining = deadline - options.now()
        if remaining <= 0:
            return decision
        wait_s = max(1, min(options.poll_wait_s, int(remaining)))
        started = options.now()
        fresh, etag = read_decision(http, invocation_id, wait_s, etag)
        if fresh is not None:
            decision = fresh
        if reached(decision):
            break
        if options.now() - started < options.min_poll_s:
            options.sleep(min(options.min_poll_s, max(0.0, deadline - options.now())))
    return decision
