"""Seed 002's discipline around one tool call, written once as a generator of the steps to take.

Ask the guard, write the intent before dispatch, call, classify the result into an envelope, report
it, then do what Settle decides. An unknown outcome is never retried on a guess: it is probed (when
the caller can look the effect up) and the tool is called again only when Settle's decision is
`retry_allowed` (or `proceed` after an approval), always with the same idempotency key.

The generator yields what it needs done (a request to Settle, the tool call, the probe) and is sent
the answer, so one sequence serves both the blocking and the asyncio driver (drivers.py).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Generator, Generic, Literal, Optional, Set, Tuple, Type, TypeVar, Union, cast

from .classify import CallResult, ClassifyContext, Envelope, ProbeFinding, classify_result, probe_envelope, read_locally
from .errors import SettleError, SettleUnreachable
from .wire import Decision, GuardAnswer, GuardInput, ReportResult, SettleRecord

R = TypeVar("R")
T = TypeVar("T")
Classifier = Callable[[CallResult[Any], ClassifyContext], Envelope]
ToolRunStatus = Literal["done", "partial", "needs_input", "abandoned", "unresolved"]


@dataclass(frozen=True)
class ToolCall:
    """What the wrapped function may read about its own call (`settle_client.current_call()`)."""

    task_id: str
    invocation_id: str
    #: Send it to the receiver (an Idempotency-Key header, say): the same on every attempt.
    idempotency_key: str
    attempt: int
    timeout_s: Optional[float] = None
    started: float = field(default_factory=time.monotonic)
    #: Set when the budget is spent: a tool that cannot be interrupted should stop at the next chance.
    cancelled: threading.Event = field(default_factory=threading.Event)

    def remaining_s(self) -> Optional[float]:
        """The call's budget left, to pass on as the tool's own timeout (source article 002 (docs/outcome-model.md): one budget)."""
        if self.timeout_s is None:
            return None
        return max(0.0, self.timeout_s - (time.monotonic() - self.started))


@dataclass(frozen=True)
class AskGuard:
    body: GuardInput


@dataclass(frozen=True)
class Post:
    record: SettleRecord
    #: May wait in the spool when Settle is away.
    spool: bool


@dataclass(frozen=True)
class ReadDecision:
    invocation_id: str


@dataclass(frozen=True)
class WaitDecision:
    invocation_id: str
    timeout_s: float
    until: Callable[[Decision], bool]


@dataclass(frozen=True)
class Call:
    call: ToolCall
    #: A person approved these arguments (by parameter name) in place of the call's own: the tool runs with them.
    approved: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class Probe:
    idempotency_key: str


Op = Union[AskGuard, Post, ReadDecision, WaitDecision, Call, Probe]
#: A probe answers with what it found, or with the exception that made it fail.
ProbeOutcome = Tuple[Optional[ProbeFinding[Any]], Optional[BaseException]]
Steps = Generator[Op, Any, T]


@dataclass
class ToolRun(Generic[R]):
    status: ToolRunStatus
    #: What the last call returned, or what a probe found (`has_value` says whether there is one).
    value: Optional[R]
    has_value: bool
    #: Settle's last decision; None when the run ended without Settle (`offline`).
    decision: Optional[Decision]
    invocation_id: str
    idempotency_key: str
    #: Tool calls this run made; 0 when the guard refused every call.
    calls: int
    commit_state: str
    next_action: str
    guard_reason: Optional[str] = None
    tool_error: Optional[BaseException] = None
    offline: bool = False
    #: A person's message to the agent with the rejection or escalation that ended the run: the model's to read.
    reply: Optional[str] = None
    #: The arguments a person approved in place of the call's own, when the tool ran with them (approve with edits).
    approved_arguments: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class Spec:
    tool: str
    effect_class: str
    classify: Classifier = classify_result
    input_errors: Tuple[Type[BaseException], ...] = ()
    timeout_s: Optional[float] = None
    decision_timeout_s: float = 60.0
    max_calls: int = 3
    use_guard: bool = True
    has_probe: bool = False
    #: Call the tool even when Settle cannot be reached before it (reads by default; see client.py).
    fail_open: bool = False
    #: Send the call's arguments with its intent (the approved ones, after an approval with edits).
    send_arguments: bool = True
    wall_clock: Callable[[], float] = time.time
    monotonic: Callable[[], float] = time.monotonic


def iso_time(seconds: float) -> str:
    """As JavaScript's toISOString: UTC, milliseconds, Z."""
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def next_action_for(decision: Decision) -> str:
    kind, status = decision["decision"], decision["status"]
    if kind == "do_not_retry":
        return "none"
    if kind in ("retry_allowed", "proceed") or status in ("retry_scheduled", "pending"):
        return "wait_and_retry"
    if kind == "correct_input":
        return "correct_input"
    if kind == "abandon" or status == "partially_applied":
        return "choose_alternative"
    if status == "awaiting_approval":
        return "request_approval"
    if status == "escalated":
        return "escalate"
    return "verify_operation"


UNKNOWN_STATUSES = ("outcome_unknown", "stalled")


def _reply_of(decision: Optional[Decision]) -> Optional[str]:
    """A person's words to the agent with the decision, when it carries any."""
    reply = decision.get("reply") if decision is not None else None
    return reply if isinstance(reply, str) and reply.strip() else None


class Run:
    def __init__(
        self, spec: Spec, task_id: str, key: str, invocation_id: Optional[str], arguments: Optional[Dict[str, Any]] = None
    ) -> None:
        self.spec = spec
        self.arguments = arguments
        self.task_id = task_id
        self.key = key
        self.named = invocation_id is not None
        self.invocation_id = invocation_id or f"{task_id}:{key}"
        self.attempt = 0
        self.calls = 0
        #: The decision version at which the guard last refused a call: that state does not allow one, whatever it says.
        self.denied_at: Optional[int] = None
        self.value: Any = None
        self.has_value = False
        self.probed: Set[int] = set()
        self.guard_reason: Optional[str] = None
        self.tool_error: Optional[BaseException] = None
        self.last_envelope: Optional[Envelope] = None
        self.approved: Optional[Dict[str, Any]] = None

    def steps(self) -> Steps[ToolRun[Any]]:
        first = yield from self.attempt_once()
        return (yield from self.follow(first))

    def at(self) -> str:
        return iso_time(self.spec.wall_clock())

    def base(self, n: int, phase: str, suffix: str = "") -> SettleRecord:
        # Fields in the TypeScript client's order, so that the two send the same bytes but for the times.
        record: Dict[str, Any] = {"event_id": f"{self.invocation_id}:a{n}:{phase}{suffix}", "task_id": self.task_id, "invocation_id": self.invocation_id}
        if n > 0:
            record.update(attempt=n, attempt_id=f"{self.invocation_id}:a{n}")
        record.update(tool=self.spec.tool, phase=phase, at=self.at(), idempotency_key=self.key, effect_class=self.spec.effect_class)
        return cast(SettleRecord, record)

    def post(self, record: SettleRecord, spool: bool) -> Steps[ReportResult]:
        """Reports one record and waits for Settle's answer; a rejected record is an error (nothing was stored)."""
        result: ReportResult = yield Post(record, spool)
        if result["status"] == "rejected":
            error = result.get("error")
            reason = error["agent_message"] if error else "no reason given"
            raise SettleError(
                f"Settle rejected the {record.get('phase')} record {record.get('event_id')}: {reason}",
                status=207,
                code=error["code"] if error else "REJECTED",
                envelope=error,
                invocation_id=self.invocation_id,
                calls=self.calls,
            )
        return result

    def write_intent(self, n: int) -> Steps[int]:
        """Writes the intent before dispatch. A `duplicate` on first delivery means an earlier run used this attempt number."""
        while True:
            record = self.base(n, "intent")
            if self.spec.timeout_s:
                record["budget_left_s"] = math.ceil(self.spec.timeout_s)
            if self.arguments is not None:
                record["arguments"] = self.arguments
            try:
                result = yield from self.post(record, spool=self.spec.fail_open)
            except SettleUnreachable as error:
                error.invocation_id, error.calls, error.commit_state = self.invocation_id, self.calls, "not_committed"
                raise
            if result["status"] in ("accepted", "spooled") or result.get("resent"):
                return n
            n += 1

    def guard_allows(self) -> Steps[bool]:
        """Asks the guard before every call, so that two workers following one decision cannot both act on it."""
        if not self.spec.use_guard:
            return True
        named = self.named or self.calls > 0
        body: GuardInput = {"task_id": self.task_id, "tool": self.spec.tool, "idempotency_key": self.key, "effect_class": self.spec.effect_class, "at": self.at()}
        if named:
            body["invocation_id"] = self.invocation_id
        if self.arguments is not None:
            # The guard holds a write under a new key against the same call only if it sees the arguments.
            body["arguments"] = self.arguments
        try:
            answer: GuardAnswer = yield AskGuard(body)
        except SettleUnreachable as error:
            if not self.spec.fail_open:
                error.invocation_id, error.calls, error.commit_state = self.invocation_id, self.calls, "not_committed"
                raise
            return True
        # Before the first call Settle names the invocation: this one, or the one that blocks it.
        if not named:
            self.invocation_id = answer["invocation_id"]
        if not answer["allow"]:
            self.guard_reason = answer["reason"]
        return answer["allow"]

    def read_decision(self) -> Steps[Optional[Decision]]:
        try:
            decision: Decision = yield ReadDecision(self.invocation_id)
        except SettleUnreachable:
            return None
        return decision

    def classify(self, result: CallResult[Any]) -> Envelope:
        context = ClassifyContext(self.spec.tool, self.spec.effect_class, self.attempt, f"{self.invocation_id}:a{self.attempt}", self.spec.input_errors)
        try:
            return self.spec.classify(result, context)
        except Exception as error:
            # A classifier that cannot read the result has no evidence either way.
            return classify_result(CallResult("threw", error=error), replace(context, effect_class="create", input_errors=()))

    def attempt_once(self) -> Steps[Optional[Decision]]:
        """One transport attempt: guard, intent, call, outcome. Returns Settle's decision after it (None: Settle is away)."""
        if not (yield from self.guard_allows()):
            # Committed, unresolved or in flight elsewhere: no call; follow Settle instead.
            decision = yield from self.read_decision()
            if decision is not None:
                self.denied_at = decision["version"]
            return decision
        self.attempt = yield from self.write_intent(self.attempt + 1)
        self.calls += 1
        call = ToolCall(self.task_id, self.invocation_id, self.key, self.attempt, self.spec.timeout_s)
        result: CallResult[Any] = yield Call(call, self.approved)
        if result.kind == "returned":
            self.value, self.has_value = result.value, True
        self.tool_error = result.error
        self.last_envelope = self.classify(result)
        # The outcome is evidence: when Settle is away it waits in the spool, whatever the effect class.
        record = self.base(self.attempt, "outcome")
        record["envelope"] = self.last_envelope
        answer = yield from self.post(record, spool=True)
        if result.kind == "interrupted" and result.error is not None:
            raise result.error
        if answer["status"] == "spooled":
            return None
        return (yield from self.read_decision())

    def may_probe(self, d: Decision) -> bool:
        return (
            self.spec.has_probe
            and d["version"] not in self.probed
            and (d["decision"] == "verify" or (d["commit_state"] == "unknown" and d["status"] in UNKNOWN_STATUSES))
        )

    def probe_once(self, d: Decision) -> Steps[Optional[Decision]]:
        """Seed 002: a retry is a guess, a probe is a measurement."""
        self.probed.add(d["version"])
        outcome: ProbeOutcome = yield Probe(self.key)
        finding, failed = outcome
        if finding is not None and finding.found and finding.value is not None:
            self.value, self.has_value = finding.value, True
        self.last_envelope = probe_envelope(finding, failed)
        record = self.base(self.attempt, "probe", f":v{d['version']}")
        record["envelope"] = self.last_envelope
        answer = yield from self.post(record, spool=True)
        if answer["status"] == "spooled":
            return None
        return (yield from self.read_decision())

    def follow(self, first: Optional[Decision]) -> Steps[ToolRun[Any]]:
        """Acts on Settle's decisions until one ends the run or the wait for a person runs out."""
        deadline = self.spec.monotonic() + self.spec.decision_timeout_s
        d = first
        while True:
            if d is None:
                return self.finish_offline()
            if self.may_probe(d):
                d = yield from self.probe_once(d)
                continue
            if d["decision"] in ("retry_allowed", "proceed") and self.denied_at != d["version"]:
                if self.calls >= self.spec.max_calls:
                    return self.finish("unresolved", d)
                approved = d.get("approved_arguments")
                if d["decision"] == "proceed" and isinstance(approved, dict):
                    # Approved with edits: the tool runs with exactly what the person approved, and its intent says so.
                    self.approved = approved
                    self.arguments = dict(approved) if self.spec.send_arguments and approved else None
                d = yield from self.attempt_once()
                continue
            if d["decision"] == "do_not_retry":
                return self.finish("done", d)
            if d["decision"] == "correct_input":
                return self.finish("needs_input", d)
            if d["decision"] == "abandon":
                return self.finish("abandoned", d)
            if d["status"] == "partially_applied":
                return self.finish("partial", d)
            # wait, verify without a probe, or an allowance the guard refused: until something changes.
            remaining = deadline - self.spec.monotonic()
            if remaining <= 0:
                return self.finish("unresolved", d)
            changed = self.changed_from(d)
            try:
                latest: Decision = yield WaitDecision(self.invocation_id, remaining, changed)
            except SettleUnreachable:
                return self.finish("unresolved", d)
            if not changed(latest):
                return self.finish("unresolved", latest)
            d = latest

    def changed_from(self, seen: Decision) -> Callable[[Decision], bool]:
        return lambda x: x["version"] != seen["version"] or x["decision"] != seen["decision"] or x["status"] != seen["status"] or self.may_probe(x)

    def finish(self, status: ToolRunStatus, d: Decision) -> ToolRun[Any]:
        return self.ended(status, d, d["commit_state"], next_action_for(d), offline=False)

    def finish_offline(self) -> ToolRun[Any]:
        """Settle cannot be asked: end on what this client's own envelope says, and never call again."""
        reading = read_locally(self.last_envelope, self.spec.effect_class)
        status: ToolRunStatus = "unresolved"
        if reading.commit_state == "committed":
            status = "done"
        elif reading.commit_state == "partial":
            status = "partial"
        elif reading.next_action == "correct_input":
            status = "needs_input"
        elif reading.commit_state == "not_committed" and reading.next_action != "wait_and_retry":
            status = "abandoned"
        return self.ended(status, None, reading.commit_state, reading.next_action, offline=True)

    def ended(self, status: ToolRunStatus, d: Optional[Decision], commit_state: str, next_action: str, offline: bool) -> ToolRun[Any]:
        return ToolRun(
            status=status,
            value=self.value,
            has_value=self.has_value,
            decision=d,
            invocation_id=self.invocation_id,
            idempotency_key=self.key,
            calls=self.calls,
            commit_state=commit_state,
            next_action=next_action,
            guard_reason=self.guard_reason,
            tool_error=self.tool_error,
            offline=offline,
            reply=_reply_of(d),
            approved_arguments=self.approved,
        )
