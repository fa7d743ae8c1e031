"""Settle's Python client: report tool-call attempts, ask the guard, follow decisions, and wrap a
tool in source article 002 (docs/outcome-model.md)'s discipline. Standard library only. The same contract as @settle/client."""

from .classify import (
    CallResult,
    ClassifyContext,
    InvalidInput,
    NotDispatched,
    ProbeFinding,
    classify_exception,
    classify_result,
    intent_key,
    probe_envelope,
)
from .client import Settle
from .drivers import current_call
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
    SettleUnreachable,
    is_error_envelope,
)
from .steps import ToolCall, ToolRun
from .wire import CommitState, Decision, DecisionKind, EffectClass, ErrorEnvelope, GuardAnswer, RecordResult, ReportResult, SettleRecord
from .verifiers import Finding, VerificationItem
from .wrap import AsyncTool, SyncTool, current_task, task

__version__ = "0.1.0"

__all__ = [
    "Abandoned",
    "AsyncTool",
    "AwaitingApproval",
    "CallResult",
    "ClassifyContext",
    "CommitState",
    "CommittedWithoutResult",
    "Decision",
    "DecisionKind",
    "DuplicateRefused",
    "EffectClass",
    "ErrorEnvelope",
    "Finding",
    "GuardAnswer",
    "InvalidInput",
    "NeedsInput",
    "NotDispatched",
    "OutcomeUnknown",
    "PartiallyApplied",
    "ProbeFinding",
    "RecordResult",
    "ReportResult",
    "RetryLater",
    "Settle",
    "SettleError",
    "SettleRecord",
    "SettleUnreachable",
    "SyncTool",
    "ToolCall",
    "ToolRun",
    "VerificationItem",
    "classify_exception",
    "classify_result",
    "current_call",
    "current_task",
    "intent_key",
    "is_error_envelope",
    "probe_envelope",
    "task",
]
