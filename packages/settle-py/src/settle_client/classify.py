"""What a tool call produced, turned into an outcome envelope Settle reads (source article 002 (docs/outcome-model.md)'s closed vocabulary).

The default never claims more than it saw: a write that raised or ran out of time may have landed, so
it is `unknown`. Only explicit evidence makes a failed write `not_committed`: an input error the tool
raised before dispatch (`InvalidInput`, or the types passed as `input_errors`), a `NotDispatched` the
tool raised because it knows nothing was sent, or an HTTP error status (the receiver answered).
"""

from __future__ import annotations

import hashlib
import urllib.error
from dataclasses import dataclass
from typing import Any, Dict, Generic, Literal, Optional, Tuple, Type, TypeVar

R = TypeVar("R")
Envelope = Dict[str, Any]
CallKind = Literal["returned", "threw", "timed_out", "interrupted"]


class InvalidInput(Exception):
    """Raise it from a tool, before dispatch, when the arguments are wrong: not committed, correct the input."""

    def __init__(self, message: str, *, field: Optional[str] = None, hint: Optional[str] = None, code: str = "INVALID_INPUT") -> None:
        super().__init__(message)
        self.field = field
        self.hint = hint
        self.code = code


class NotDispatched(Exception):
    """Raise it from a tool that knows nothing was sent (say, a connection refused before its only request)."""

    def __init__(self, message: str, *, retry_after_s: Optional[float] = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class CallResult(Generic[R]):
    """`returned` a value, `threw` an exception, `timed_out` past its budget, or was `interrupted`
    (KeyboardInterrupt, task cancellation: reported, then raised again)."""

    kind: CallKind
    value: Optional[R] = None
    error: Optional[BaseException] = None
    after_s: float = 0.0


@dataclass(frozen=True)
class ClassifyContext:
    tool: str
    effect_class: str
    attempt: int
    attempt_id: str
    input_errors: Tuple[Type[BaseException], ...] = (InvalidInput,)


@dataclass(frozen=True)
class ProbeFinding(Generic[R]):
    """What a probe (a read that looks the effect up by idempotency key) found; `value` is what it read."""

    found: bool
    value: Optional[R] = None


def message_of(error: BaseException) -> str:
    return (str(error) or type(error).__name__)[:500]


def _problem(error: urllib.error.HTTPError) -> Envelope:
    """An HTTP error status is the receiver's own answer: an RFC 9457 document, which Settle reads by status."""
    problem: Envelope = {"type": "about:blank", "title": str(error.reason), "status": error.code, "detail": f"HTTP {error.code} {error.reason}"}
    retry_after = (error.headers.get("Retry-After") or "").strip() if error.headers else ""
    if retry_after.isdigit():
        problem["retry_after"] = int(retry_after)
    return problem


def classify_exception(error: BaseException, context: ClassifyContext) -> Envelope:
    attempt_id = context.attempt_id
    message = message_of(error)
    if isinstance(error, context.input_errors):
        # source article 001 (docs/outcome-model.md)'s five fields: `field` set means not committed, correct the input.
        field = getattr(error, "field", None) or "arguments"
        hint = getattr(error, "hint", None) or "Correct the arguments and call again."
        return {"code": getattr(error, "code", "INVALID_INPUT"), "message": message, "retryable": False, "hint": hint, "field": field}
    if isinstance(error, NotDispatched):
        envelope: Envelope = {"outcome": "retryable", "effect_applied": "no", "attempt_id": attempt_id, "message": message}
        if error.retry_after_s is not None:
            envelope["retry_after_s"] = error.retry_after_s
        return envelope
    if isinstance(error, urllib.error.HTTPError):
        return _problem(error)
    # A failed read changed nothing; a failed write may have changed everything.
    if context.effect_class == "read":
        return {"outcome": "retryable", "effect_applied": "no", "attempt_id": attempt_id, "message": message}
    return {"outcome": "unknown", "effect_applied": "unknown", "attempt_id": attempt_id, "message": message}


def classify_result(result: CallResult[Any], context: ClassifyContext) -> Envelope:
    """The default classification (source article 002 (docs/outcome-model.md)): returned is ok; a timeout, a reset or any other exception
    of a write is unknown; a failed read is retryable; explicit evidence says not committed."""
    attempt_id = context.attempt_id
    if result.kind == "returned":
        return {"outcome": "ok", "effect_applied": "yes", "attempt_id": attempt_id}
    if result.kind == "timed_out":
        message = f"no answer within {round(result.after_s * 1000)} ms; the call may still complete"
        if context.effect_class == "read":
            return {"outcome": "retryable", "effect_applied": "no", "attempt_id": attempt_id, "message": message}
        return {"outcome": "unknown", "effect_applied": "unknown", "attempt_id": attempt_id, "message": message}
    assert result.error is not None
    if result.kind == "interrupted" and context.effect_class != "read":
        return {"outcome": "unknown", "effect_applied": "unknown", "attempt_id": attempt_id, "message": f"interrupted: {message_of(result.error)}"}
    return classify_exception(result.error, context)


def probe_envelope(finding: Optional[ProbeFinding[Any]], failed: Optional[BaseException] = None) -> Envelope:
    """The envelope of a probe record: found, not found, or the probe itself failed (still unknown)."""
    if failed is not None or finding is None:
        reason = message_of(failed) if failed is not None else "no finding"
        return {"outcome": "unknown", "effect_applied": "unknown", "message": f"probe failed: {reason}"}
    if finding.found:
        return {"outcome": "ok", "effect_applied": "yes", "message": "found by idempotency key"}
    return {"outcome": "ok", "effect_applied": "no", "message": "not found by idempotency key"}


@dataclass(frozen=True)
class Reading:
    commit_state: str
    next_action: str


def read_locally(envelope: object, effect_class: str) -> Reading:
    """What the envelopes this client writes say, for when Settle cannot be asked. Anything else is no evidence."""
    write = effect_class != "read"
    nothing = Reading("unknown", "verify_operation") if write else Reading("not_committed", "wait_and_retry")
    if not isinstance(envelope, dict):
        return nothing
    effect = envelope.get("effect_applied")
    if "outcome" in envelope and effect in ("yes", "no", "partial", "unknown"):
        if effect == "yes":
            return Reading("committed", "none")
        if effect == "partial":
            return Reading("partial", "choose_alternative")
        if effect == "unknown":
            return nothing
        return Reading("not_committed", "wait_and_retry" if envelope.get("outcome") == "retryable" else "choose_alternative")
    if isinstance(envelope.get("code"), str) and envelope.get("field"):
        return Reading("not_committed", "correct_input")
    status = envelope.get("status")
    if isinstance(status, int) and 400 <= status < 500 and status != 408:
        if status == 429:
            return Reading("not_committed", "wait_and_retry")
        if status in (400, 422):
            return Reading("not_committed", "correct_input")
        return Reading("not_committed", "escalate" if status in (401, 403) else "choose_alternative")
    return nothing


def intent_key(task_id: str, actor: str, verb: str, target: str, slot: Optional[str] = None) -> str:
    """source article 002 (docs/outcome-model.md): the key is derived from the intent (who, on what, to do what, in which task), never the payload."""
    raw = f"{task_id}|{actor}|{verb}|{target}|{slot or ''}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]
