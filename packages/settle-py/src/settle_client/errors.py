"""Errors: one base class carrying Settle's reading of what happened, a subclass per situation.

A caller can catch `SettleError` and read `commit_state` and `next_action` to know whether the effect
happened and what to do; the subclass names the situation. When the tool itself raised, its exception
is the `__cause__` (and `tool_error`), so nothing it said is lost.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .wire import Decision, ErrorEnvelope


class SettleError(Exception):
    """A request Settle refused, or a wrapped tool call whose run ended without a result to return.

    `status` is the HTTP status of Settle's answer (0: no answer at all); `envelope` is Settle's own
    error envelope when it sent one. For a tool run, `decision` is Settle's last decision on the
    invocation and `commit_state` / `next_action` say whether the effect happened and what to do.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str = "SETTLE_ERROR",
        envelope: Optional[ErrorEnvelope] = None,
        invocation_id: Optional[str] = None,
        commit_state: str = "unknown",
        next_action: str = "escalate",
        decision: Optional[Decision] = None,
        tool_error: Optional[BaseException] = None,
        calls: int = 0,
        reply: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.envelope = envelope
        self.invocation_id = invocation_id
        self.commit_state = commit_state
        self.next_action = next_action
        self.decision = decision
        self.tool_error = tool_error
        self.calls = calls
        #: A person's words to the agent with a rejection or an escalation (the message quotes them too).
        self.reply = reply

    def to_dict(self) -> Dict[str, Any]:
        """What an agent (or a log line) needs to act on this, as plain data."""
        return {
            "error": type(self).__name__,
            "code": self.code,
            "message": self.message,
            "invocation_id": self.invocation_id,
            "commit_state": self.commit_state,
            "next_action": self.next_action,
            "decision": self.decision,
            "envelope": self.envelope,
            "reply": self.reply,
        }


class SettleUnreachable(SettleError):
    """Settle did not answer, or answered that it is unavailable, after the client's retries."""


class OutcomeUnknown(SettleError):
    """Nobody knows yet whether the effect happened. Do not call again: probe, or wait for a person."""


class AwaitingApproval(SettleError):
    """A person has to approve before the call may be made (again)."""


class DuplicateRefused(SettleError):
    """The guard refused the call: the key is already committed, unresolved, or in flight elsewhere.

    `reason` is the guard's; `commit_state` is Settle's latest reading (`committed`: the effect exists).
    """

    def __init__(self, message: str, *, reason: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.reason = reason


class CommittedWithoutResult(SettleError):
    """The effect is committed (a person or a probe said so), but this call's answer was lost."""


class NeedsInput(SettleError):
    """Not committed; the request has to change before it is made again."""


class Abandoned(SettleError):
    """Not committed, and not to be retried: refused, rejected, or failed for good."""


class PartiallyApplied(SettleError):
    """Some items applied and some not: `value` has what the tool returned; retry the rest under a new key."""

    def __init__(self, message: str, *, value: Any = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.value = value


class RetryLater(SettleError):
    """Not committed and retrying is allowed, but this run stopped (its calls or its wait ran out)."""


def is_error_envelope(body: object) -> bool:
    """Whether an answer's body is Settle's own error envelope."""
    return (
        isinstance(body, dict)
        and body.get("ok") is False
        and isinstance(body.get("code"), str)
        and isinstance(body.get("retry"), dict)
    )
