"""Verifiers: Settle asks the runtime whether an unknown call took effect, before it asks a person.

When a call of a tool whose catalog entry has `verify` becomes unknown, Settle hands the runtime an
*ask* (GET /api/v1/verifications, a long poll; each ask is leased to the worker that took it). A
verifier is the read that answers it (list refunds by the idempotency key); the worker loop runs it
and posts the finding. A verifier that raises, does not answer in time, or is missing answers
"could not tell" (found None), so Settle asks again later: it never guesses.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import random
import threading
import urllib.parse
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, TypedDict, Union, cast

from .errors import SettleError
from .http import HttpOptions, quote_id, request

log = logging.getLogger("settle_client")

EVIDENCE_MAX = 4096
BACKOFF_CAP_S = 30.0
#: Settle hands out at most 20 asks per poll: a larger concurrency takes 20 at a time.
TAKE_MAX = 20


#: What an ask carries (`try` is a keyword, hence this form).
VerificationItem = TypedDict(
    "VerificationItem",
    {
        "id": str,
        "invocation_id": str,
        "task_id": str,
        "tool": str,
        "effect_class": Optional[str],
        "idempotency_key": Optional[str],
        "arguments": Optional[Dict[str, Any]],
        "first_dispatched_at": str,
        "try": int,
        "max_tries": int,
        "lease_expires_at": str,
    },
)


@dataclass
class Finding:
    """found: True, the effect exists; False, it does not; None, the lookup could not tell."""

    found: Optional[bool]
    evidence: Optional[str] = None
    ref: Optional[str] = None

    def body(self) -> Dict[str, Any]:
        return {"found": self.found, "evidence": self.evidence, "ref": self.ref}


FindingLike = Union[Finding, Mapping[str, Any]]
Verifier = Callable[[Dict[str, Any]], Union[FindingLike, Awaitable[FindingLike]]]
#: Told about every ask answered or refused and every failed poll: ("answered" | "refused" | "poll_failed", details).
OnEvent = Callable[[str, Dict[str, Any]], None]


def _matches(pattern: str, tool: str) -> bool:
    """`*` stands for any characters, as in Settle's tool catalog."""
    parts = pattern.split("*")
    if len(parts) == 1:
        return pattern == tool
    if not tool.startswith(parts[0]):
        return False
    at = len(parts[0])
    for part in parts[1:-1]:
        found = tool.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return len(tool) - len(parts[-1]) >= at and tool.endswith(parts[-1])


def verifier_for(registered: Mapping[str, Verifier], tool: str) -> Optional[Verifier]:
    """The most specific verifier for `tool`: its exact name first, then the pattern with most literal characters."""
    if tool in registered:
        return registered[tool]
    candidates = [(len(p.replace("*", "")), p) for p in registered if "*" in p and _matches(p, tool)]
    return registered[max(candidates)[1]] if candidates else None


def _clip(text: str) -> str:
    return text if len(text) <= EVIDENCE_MAX else text[: EVIDENCE_MAX - 1] + "…"


def to_finding(value: object) -> Finding:
    """A verifier's return value as a Finding; anything without `found` is "could not tell"."""
    if isinstance(value, Finding):
        finding = value
    elif isinstance(value, Mapping) and "found" in value:
        finding = Finding(value.get("found"), value.get("evidence"), value.get("ref"))
    else:
        return Finding(None, "the verifier answered without `found`")
    if finding.found not in (True, False, None):
        return Finding(None, "the verifier answered `found` that is not true, false or None")
    return Finding(finding.found, _clip(str(finding.evidence)) if finding.evidence else None, finding.ref)


def _failed(error: BaseException) -> Finding:
    return Finding(None, _clip(f"the verifier failed: {error}"))


class Verifiers:
    """The verifier registry and both worker loops; `Settle` exposes them as its own methods."""

    def __init__(self, http: HttpOptions) -> None:
        self._http = http
        self.registered: Dict[str, Verifier] = {}

    def verifier(self, tool: str) -> Callable[[Verifier], Verifier]:
        """A decorator: `@settle.verifier("create_refund")` over `def check(item) -> {"found": ..., "evidence": ...}`
        (plain or async). `*` in `tool` matches any characters; the most specific pattern wins."""

        def register(fn: Verifier) -> Verifier:
            self.registered[tool] = fn
            return fn

        return register

    def take_verifications(self, wait_s: int = 0, limit: int = 10, worker: Optional[str] = None) -> List[Dict[str, Any]]:
        """Takes up to `limit` asks of this runtime, each leased to this worker (holds up to `wait_s`, 0–60)."""
        query = {"wait": str(wait_s), "limit": str(limit), **({"worker": worker} if worker else {})}
        answer = request(self._http, "GET", f"/api/v1/verifications?{urllib.parse.urlencode(query)}", timeout_s=self._http.timeout_s + wait_s)
        body = answer.body if isinstance(answer.body, dict) else {}
        return [dict(i) for i in body.get("items") or []]

    def answer_verification(self, ask_id: str, finding: FindingLike) -> Dict[str, Any]:
        """Answers one ask (POST /api/v1/verifications/{id}); a closed or unknown ask raises SettleError (409, 404)."""
        return cast(Dict[str, Any], request(self._http, "POST", f"/api/v1/verifications/{quote_id(ask_id)}", to_finding(finding).body()).body)

    def _run_blocking(self, item: Dict[str, Any], timeout_s: float) -> Finding:
        found = verifier_for(self.registered, item["tool"])
        if found is None:
            return Finding(None, f"no verifier registered for {item['tool']} in this worker")
        fn: Verifier = found

        def call() -> object:
            result = fn(item)
            return asyncio.run(cast(Any, result)) if inspect.isawaitable(result) else result

        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="settle-verifier")
        try:
            return to_finding(pool.submit(call).result(timeout=timeout_s))
        except concurrent.futures.TimeoutError:
            return Finding(None, f"the verifier took longer than {timeout_s:g} s")
        except Exception as error:  # noqa: BLE001 — any failure of the runtime's read is "could not tell"
            return _failed(error)
        finally:
            # A verifier that hangs keeps its thread; the loop does not wait for it.
            pool.shutdown(wait=False)

    def _answer(self, item: Dict[str, Any], finding: Finding, on_event: OnEvent) -> None:
        try:
            on_event("answered", {"item": item, "finding": finding, "answer": self.answer_verification(item["id"], finding)})
        except SettleError as error:
            if error.status in (401, 403):
                raise
            # 409: answered or closed meanwhile (a person settled it); 404: gone. Nothing to redo.
            on_event("refused", {"item": item, "error": error})

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
        """Runs the worker loop until `stop` is set (it returns within `wait_s` of that). Settle being away
        is retried with back-off; a refused key raises."""
        stop = stop or threading.Event()
        tell = on_event or _log_event
        failures = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(concurrency, 1), thread_name_prefix="settle-ask") as pool:
            while not stop.is_set():
                try:
                    items = self.take_verifications(wait_s, min(concurrency, TAKE_MAX), worker)
                    failures = 0
                except SettleError as error:
                    failures += 1
                    stop.wait(_after_poll_failed(error, failures, tell))
                    continue
                work = [pool.submit(lambda i=item: self._answer(i, self._run_blocking(i, timeout_s), tell)) for item in items]
                for done in work:
                    done.result()

    async def serve_verifications_async(
        self,
        stop: Optional[asyncio.Event] = None,
        *,
        wait_s: int = 30,
        concurrency: int = 4,
        timeout_s: float = 20.0,
        worker: Optional[str] = None,
        on_event: Optional[OnEvent] = None,
    ) -> None:
        """The loop on asyncio: async verifiers are awaited, plain ones run in a thread; HTTP runs in a thread.
        Stops when `stop` is set or the task is cancelled."""
        stop = stop or asyncio.Event()
        tell = on_event or _log_event
        failures = 0
        while not stop.is_set():
            poll = asyncio.ensure_future(asyncio.to_thread(self.take_verifications, wait_s, min(concurrency, TAKE_MAX), worker))
            stopped = asyncio.ensure_future(stop.wait())
            await asyncio.wait({poll, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if stop.is_set():
                # The poll's thread finishes on its own; an ask it took is leased and will be asked again.
                poll.cancel()
                return
            try:
                items = poll.result()
                failures = 0
            except SettleError as error:
                failures += 1
                try:
                    await asyncio.wait_for(stop.wait(), _after_poll_failed(error, failures, tell))
                except asyncio.TimeoutError:
                    pass
                continue
            await asyncio.gather(*(self._serve_one_async(item, timeout_s, tell) for item in items))

    async def _serve_one_async(self, item: Dict[str, Any], timeout_s: float, tell: OnEvent) -> None:
        fn = verifier_for(self.registered, item["tool"])
        if fn is None:
            finding = Finding(None, f"no verifier registered for {item['tool']} in this worker")
        else:
            try:
                if inspect.iscoroutinefunction(fn):
                    result = await asyncio.wait_for(cast(Awaitable[FindingLike], fn(item)), timeout_s)
                else:
                    returned: object = await asyncio.wait_for(asyncio.to_thread(cast(Callable[[Dict[str, Any]], object], fn), item), timeout_s)
                    if inspect.isawaitable(returned):
                        returned = await asyncio.wait_for(cast(Awaitable[FindingLike], returned), timeout_s)
                    result = cast(FindingLike, returned)
                finding = to_finding(result)
            except asyncio.TimeoutError:
                finding = Finding(None, f"the verifier took longer than {timeout_s:g} s")
            except Exception as error:  # noqa: BLE001 — any failure of the runtime's read is "could not tell"
                finding = _failed(error)
        await asyncio.to_thread(self._answer, item, finding, tell)


def _after_poll_failed(error: SettleError, failures: int, tell: OnEvent) -> float:
    """How long to wait after the `failures`-th failed poll in a row (jittered back-off); a refused key or a
    request Settle refuses as malformed raises: neither heals by waiting."""
    if error.status in (400, 401, 403):
        raise error
    base: float = min(0.5 * 2.0 ** (failures - 1), BACKOFF_CAP_S)
    delay = base * (0.8 + 0.4 * random.random())
    tell("poll_failed", {"error": error, "retry_in_s": delay})
    return delay


def _log_event(kind: str, details: Dict[str, Any]) -> None:
    if kind == "refused":
        log.warning("settle: the answer to ask %s was refused: %s", details["item"]["id"], details["error"])
    elif kind == "poll_failed":
        log.warning("settle: asking for work failed (%s); again in %.1f s", details["error"], details["retry_in_s"])
