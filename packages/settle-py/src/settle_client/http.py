"""One request to Settle, resent only when Settle's answer (or the lack of one) says that is safe and useful.

A lost connection, a 429, or a 5xx whose error envelope allows a retry is resent. Every call the
client makes is safe to resend (docs/outcome-model.md §5): ingest is idempotent by event_id, reads
change nothing, and a resent guard can at worst deny its own intent as in flight. A connection reset
or closed before any byte of the answer is resent at once, once, on a new connection (urllib opens
one per request), whatever max_retries says.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.message import Message
from typing import Any, Callable, Dict, Mapping, Optional, cast

from .errors import SettleError, SettleUnreachable, is_error_envelope
from .wire import ErrorEnvelope

USER_AGENT = "settle-client-python/0.1"


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Settle's API never redirects. urllib's own handler would follow one to any host with the
    request's Authorization header (the runtime key) copied along, so none is followed: the 3xx comes
    back as an answer, and `request` refuses it, naming where it pointed."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Message, newurl: str) -> None:
        return None


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(_RefuseRedirects)


@dataclass
class HttpOptions:
    url: str
    key: str
    #: Resends of one request after a failure that allows it.
    max_retries: int = 5
    timeout_s: float = 15.0
    #: A server's not_before further away than this is waited for only this long.
    max_retry_wait_s: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    opener: urllib.request.OpenerDirector = field(default_factory=_opener)


@dataclass
class Answer:
    status: int
    body: Any
    headers: Mapping[str, str]
    #: An earlier send of this request may have been processed without its answer reaching us.
    resent: bool


def encode_json(value: object) -> bytes:
    """Compact JSON, as the TypeScript client sends it; ASCII-escaped so that any str can be encoded."""
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def parse_time(value: object) -> Optional[float]:
    """Seconds since the epoch of an ISO 8601 time, or None (Python 3.9 does not read a trailing Z)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def backoff(attempt: int) -> float:
    return float(min(0.25 * 2**attempt, 10.0))


def retry_delay(status: int, body: object, attempt: int, max_wait_s: float) -> Optional[float]:
    """How long to wait before resending after this answer, or None when it must not be resent."""
    if is_error_envelope(body):
        retry = cast(ErrorEnvelope, body)["retry"]
        if retry.get("directive") not in ("after_delay", "allowed") or retry.get("max_attempts_remaining") == 0:
            return None
        not_before = parse_time(retry.get("not_before"))
        wait = backoff(attempt) if not_before is None else not_before - time.time()
        return min(max(wait, 0.05), max_wait_s)
    # A proxy in front of Settle answering without an envelope.
    return backoff(attempt) if status in (429, 502, 503, 504) else None


def _read_json(raw: bytes) -> Any:
    if raw == b"":
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def refusal(status: int, body: object, path: str) -> SettleError:
    kind = SettleUnreachable if status == 429 or status >= 500 else SettleError
    if is_error_envelope(body):
        envelope = cast(ErrorEnvelope, body)
        return kind(
            f"{path}: HTTP {status} {envelope['code']}: {envelope.get('agent_message', '')}",
            status=status,
            code=envelope["code"],
            envelope=envelope,
            commit_state=envelope.get("commit_state", "unknown"),
            next_action=envelope.get("next_action", "escalate"),
        )
    return kind(f"{path}: HTTP {status} without Settle's error envelope", status=status, code=f"HTTP_{status}")


def _describe(error: BaseException) -> str:
    if isinstance(error, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(error, urllib.error.URLError) and isinstance(error.reason, BaseException):
        return _describe(error.reason)
    return str(error) or type(error).__name__


def _headers_of(message: Message) -> Dict[str, str]:
    return {name.lower(): value for name, value in message.items()}


class AnswerBrokeOff(OSError):
    """The answer began (its status line and headers arrived) and its connection broke before its end."""


#: A connection reset or closed under a request; http.client's RemoteDisconnected ("closed without
#: response") is a ConnectionResetError. A refused connection is not one (nothing was sent), nor a timeout.
_BROKEN = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


def connection_broke(error: BaseException) -> bool:
    """Whether a request failed because its connection broke before any byte of its answer."""
    if isinstance(error, urllib.error.URLError) and isinstance(error.reason, BaseException):
        error = error.reason
    return isinstance(error, _BROKEN)


def _read_answer(res: Any) -> bytes:
    try:
        return cast(bytes, res.read())
    except (OSError, http.client.HTTPException) as error:
        raise AnswerBrokeOff(f"the answer broke off ({_describe(error)})") from error


def _send_once(options: HttpOptions, req: urllib.request.Request, timeout_s: float) -> Answer:
    try:
        with options.opener.open(req, timeout=timeout_s) as res:
            return Answer(res.status, _read_json(_read_answer(res)), _headers_of(res.headers), False)
    except urllib.error.HTTPError as error:
        # urllib raises for 304 and every 4xx/5xx: these are answers, not lost requests.
        with error:
            return Answer(error.code, _read_json(_read_answer(error)), _headers_of(error.headers), False)


def request(
    options: HttpOptions,
    method: str,
    path: str,
    body: object = None,
    headers: Optional[Mapping[str, str]] = None,
    timeout_s: Optional[float] = None,
    max_retries: Optional[int] = None,
) -> Answer:
    """Sends one request; answers below 400 are returned, anything else raises a `SettleError`."""
    target = options.url.rstrip("/") + path
    data = None if body is None else encode_json(body)
    all_headers = {"Authorization": f"Bearer {options.key}", "Accept": "application/json", "User-Agent": USER_AGENT}
    if data is not None:
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    retries = options.max_retries if max_retries is None else max_retries
    last: SettleError = SettleUnreachable(f"{path}: not sent", code="UNREACHABLE")
    wait = 0.0
    resent = False
    broken_resent = False
    attempt = 0

    while attempt <= retries:
        if attempt > 0 and wait > 0:
            options.sleep(wait)
        req = urllib.request.Request(target, data=data, headers=all_headers, method=method)
        try:
            answer = _send_once(options, req, timeout_s or options.timeout_s)
        except (OSError, http.client.HTTPException) as error:
            # The request may or may not have arrived; resending it is safe.
            last = SettleUnreachable(f"{path}: no answer from Settle ({_describe(error)})", code="UNREACHABLE")
            resent = True
            if not broken_resent and connection_broke(error):
                # Not one of the retries: sent again at once, on a new connection.
                broken_resent, wait = True, 0.0
                continue
            wait = backoff(attempt)
            attempt += 1
            continue
        if 300 <= answer.status < 400 and answer.status != 304:
            where = answer.headers.get("location", "an address it did not give")
            raise SettleError(
                f"{path}: HTTP {answer.status}, a redirect to {where}. Settle's API does not redirect, and the runtime key is never "
                "sent on to another address: set the client's url to Settle's own address.",
                status=answer.status,
                code="REDIRECT_REFUSED",
                commit_state="not_committed",
            )
        if answer.status < 400:
            answer.resent = resent
            return answer
        last = refusal(answer.status, answer.body, path)
        delay = retry_delay(answer.status, answer.body, attempt, options.max_retry_wait_s) if isinstance(last, SettleUnreachable) else None
        if delay is None:
            raise last
        wait = delay
        # Settle says whether a failed request stored anything; a 5xx without an envelope may have.
        if not is_error_envelope(answer.body) or cast(ErrorEnvelope, answer.body).get("commit_state") != "not_committed":
            resent = True
        attempt += 1
    raise last


def quote_id(value: str) -> str:
    """An id as one path segment, escaped as encodeURIComponent does."""
    return urllib.parse.quote(value, safe="-_.!~*'()")
