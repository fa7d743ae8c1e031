"""The public contract of Settle's runtime API (docs/outcome-model.md §2, §5) as plain types.

Names are Settle's wire names, so a record here is exactly what is posted.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

EffectClass = Literal["read", "create", "send", "money", "destructive"]
Phase = Literal["intent", "outcome", "probe"]
CommitState = Literal["committed", "not_committed", "unknown", "partial"]
DecisionKind = Literal["wait", "verify", "retry_allowed", "do_not_retry", "proceed", "abandon", "correct_input"]
GuardReason = Literal["already_committed", "outcome_unknown", "in_flight", "possible_duplicate"]
ReportStatus = Literal["accepted", "duplicate", "rejected", "spooled"]


class _RecordRequired(TypedDict):
    task_id: str
    tool: str


class SettleRecord(_RecordRequired, total=False):
    """One attempt record (docs/outcome-model.md §2). `envelope` is the tool's result in any dialect Settle reads."""

    event_id: str
    invocation_id: str
    attempt_id: str
    attempt: int
    phase: Phase
    at: str
    idempotency_key: str
    effect_class: str
    budget_left_s: int
    args_digest: str
    #: The call's arguments (a JSON object, at most 64 KiB): digested, stored with secrets redacted, summarised.
    arguments: Dict[str, Any]
    envelope: Any


class RetryHint(TypedDict):
    directive: Literal["never", "after_delay", "after_input_fix", "allowed"]
    not_before: Optional[str]
    max_attempts_remaining: Optional[int]


class ErrorEnvelope(TypedDict):
    """Settle's own error envelope: every request-level failure says whether and when to try again."""

    ok: bool
    code: str
    category: str
    commit_state: CommitState
    retry: RetryHint
    next_action: str
    operation_ref: str
    safe_details: Dict[str, Any]
    agent_message: str
    user_message: str


class _ResultRequired(TypedDict):
    index: int
    status: ReportStatus
    event_id: Optional[str]
    invocation_id: Optional[str]


class RecordResult(_ResultRequired, total=False):
    """Settle's answer for one posted record."""

    error: ErrorEnvelope


class ReportResult(RecordResult, total=False):
    """A record's result as the client saw it.

    `resent` is true when the answer came only after sending the batch again; status `spooled` means
    Settle could not be reached and the record waits in the local spool, to be sent when it returns.
    """

    resent: bool


class _GuardRequired(TypedDict):
    task_id: str
    tool: str
    idempotency_key: str


class GuardInput(_GuardRequired, total=False):
    invocation_id: str
    effect_class: str
    at: str
    arguments: Dict[str, Any]


class GuardAnswer(TypedDict):
    allow: bool
    reason: Optional[GuardReason]
    invocation_id: str


class Decision(TypedDict):
    invocation_id: str
    status: str
    decision: DecisionKind
    commit_state: str
    reason: Optional[str]
    decided_by: Optional[str]
    decided_at: Optional[str]
    version: int
    #: The arguments a person approved in place of the call's own (approve with edits); run the call with these.
    approved_arguments: Optional[Dict[str, Any]]
    #: A person's message to the agent with a rejection or an escalation: hand it to the model as the tool's result.
    reply: Optional[str]


Records = List[SettleRecord]
