"""A finished run, as what the wrapped function returns or raises.

A committed run returns the tool's value. Anything else raises the `SettleError` subclass that names
it, carrying the invocation, the commit state, the next action, Settle's decision and an envelope in
Settle's own shape (source article 000 (docs/outcome-model.md)) that an agent framework can hand to the model as the tool's result.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type, cast

from .errors import (
    Abandoned,
    AwaitingApproval,
    CommittedWithoutResult,
    DuplicateRefused,
    NeedsInput,
    OutcomeUnknown,
    PartiallyApplied,
    RetryLater,
    SettleError,
)
from .steps import ToolRun
from .wire import ErrorEnvelope

_CODES = {
    OutcomeUnknown: ("OUTCOME_UNKNOWN", "dependency"),
    AwaitingApproval: ("APPROVAL_REQUIRED", "authorization"),
    DuplicateRefused: ("DUPLICATE_REFUSED", "conflict"),
    CommittedWithoutResult: ("COMMITTED_WITHOUT_RESULT", "dependency"),
    NeedsInput: ("INVALID_INPUT", "validation"),
    Abandoned: ("ABANDONED", "conflict"),
    PartiallyApplied: ("PARTIALLY_APPLIED", "conflict"),
    RetryLater: ("RETRY_LATER", "dependency"),
}


def error_kind(run: ToolRun[Any]) -> Optional[Type[SettleError]]:
    """The exception a run ends in; None when it returns its value."""
    status = run.decision["status"] if run.decision else None
    if run.status == "done":
        if run.has_value:
            return None
        return DuplicateRefused if run.calls == 0 else CommittedWithoutResult
    if run.status == "partial":
        return PartiallyApplied
    if run.status == "needs_input":
        return NeedsInput
    if run.status == "abandoned":
        return Abandoned
    if run.calls == 0 and run.guard_reason is not None:
        return DuplicateRefused
    if status == "awaiting_approval" or run.next_action == "request_approval":
        return AwaitingApproval
    if run.commit_state == "not_committed":
        return RetryLater
    return OutcomeUnknown


def _message(kind: Type[SettleError], tool: str, run: ToolRun[Any]) -> str:
    reason = run.decision["reason"] if run.decision and run.decision["reason"] else None
    where = f"{tool} ({run.invocation_id})"
    if kind is DuplicateRefused:
        text = f"{where}: the guard refused the call ({run.guard_reason}); commit state {run.commit_state}"
    elif kind is CommittedWithoutResult:
        text = f"{where}: the effect is committed, but this call's answer was lost"
    else:
        text = f"{where}: {kind.__name__}, commit state {run.commit_state}, next action {run.next_action}"
    if run.offline:
        text += "; Settle could not be reached, so this is the client's own reading"
    text = f"{text}: {reason}" if reason else text
    # A person's words to the agent (a rejection's or an escalation's reply): the model reads them in the message.
    return f'{text}. They said: "{run.reply}"' if run.reply else text


def run_envelope(kind: Type[SettleError], run: ToolRun[Any], message: str) -> ErrorEnvelope:
    code, category = _CODES.get(kind, ("SETTLE_ERROR", "internal"))
    directive = {"wait_and_retry": "after_delay", "correct_input": "after_input_fix"}.get(run.next_action, "never")
    details: Dict[str, Any] = {"status": run.decision["status"], "decision": run.decision["decision"], "decided_by": run.decision["decided_by"]} if run.decision else {"offline": True}
    envelope = {
        "ok": False,
        "code": code,
        "category": category,
        "commit_state": run.commit_state,
        "retry": {"directive": directive, "not_before": None, "max_attempts_remaining": None if directive != "never" else 0},
        "next_action": run.next_action,
        "operation_ref": run.invocation_id,
        "safe_details": details,
        "agent_message": message,
        "user_message": "This action is being checked before anything is done again." if run.commit_state == "unknown" else message,
    }
    return cast(ErrorEnvelope, envelope)


def settle_run(tool: str, run: ToolRun[Any]) -> Any:
    """Returns the run's value, or raises what it ended in (chained to the tool's own exception)."""
    kind = error_kind(run)
    if kind is None:
        return run.value
    message = _message(kind, tool, run)
    fields: Any = {
        "code": _CODES[kind][0],
        "envelope": run_envelope(kind, run, message),
        "invocation_id": run.invocation_id,
        "commit_state": run.commit_state,
        "next_action": run.next_action,
        "decision": run.decision,
        "tool_error": run.tool_error,
        "calls": run.calls,
        "reply": run.reply,
    }
    if kind is DuplicateRefused:
        error: SettleError = DuplicateRefused(message, reason=run.guard_reason, **fields)
    elif kind is PartiallyApplied:
        error = PartiallyApplied(message, value=run.value, **fields)
    else:
        error = kind(message, **fields)
    raise error from run.tool_error
