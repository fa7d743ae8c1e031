"""An in-process stand-in for Settle's runtime API over real HTTP, just enough of it for unit and
contract tests: idempotent ingest by event_id, a guard, decisions derived from the last source article 002 (docs/outcome-model.md)
envelope with long polls and ETags, every request recorded, and faults injected per request.
It mirrors packages/settle-client/test/fake-settle.ts, so both clients meet the same server."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

UNAVAILABLE: Dict[str, Any] = {
    "ok": False,
    "code": "DATABASE_UNAVAILABLE",
    "category": "dependency",
    "commit_state": "not_committed",
    "retry": {"directive": "after_delay", "not_before": None, "max_attempts_remaining": 5},
    "next_action": "wait_and_retry",
    "operation_ref": "req-1",
    "safe_details": {},
    "agent_message": "Settle's database is unavailable; nothing was stored.",
    "user_message": "Try again shortly.",
}

Guard = Callable[[Dict[str, Any]], Dict[str, Any]]


def allow_all(body: Dict[str, Any]) -> Dict[str, Any]:
    return {"allow": True, "reason": None, "invocation_id": body.get("invocation_id") or f"{body['task_id']}:{body['idempotency_key']}"}


def decide(invocation_id: str, record: Dict[str, Any], version: int) -> Dict[str, Any]:
    envelope = record.get("envelope") or {}
    base = {"invocation_id": invocation_id, "reason": None, "decided_by": None, "decided_at": None, "version": version}

    def d(status: str, decision: str, commit: str, **extra: Any) -> Dict[str, Any]:
        return {**base, "status": status, "decision": decision, "commit_state": commit, **extra}

    phase = record.get("phase", "outcome")
    if phase == "intent":
        return d("pending", "wait", "unknown")
    if phase == "probe":
        if envelope.get("effect_applied") == "yes":
            return d("reconciled", "do_not_retry", "committed", decided_by="probe")
        if envelope.get("effect_applied") == "no":
            return d("reconciled", "retry_allowed", "not_committed", decided_by="probe")
        return d("escalated", "wait", "unknown")
    if envelope.get("next_action") == "request_approval":
        # A person who answers at once: the envelope's safe_details.approve_as, when given, is approved (with those
        # arguments as the edit, or as called when empty); without it the call awaits approval.
        approve_as = (envelope.get("safe_details") or {}).get("approve_as")
        if approve_as is None:
            return d("awaiting_approval", "wait", "not_committed")
        return d("approved", "proceed", "not_committed", decided_by="ana@example.com", approved_arguments=approve_as or None)
    outcome = envelope.get("outcome")
    if outcome == "ok":
        return d("succeeded", "do_not_retry", "committed")
    if outcome == "retryable":
        return d("retry_scheduled", "retry_allowed", "not_committed")
    if outcome == "permanent":
        return d("failed", "abandon", "not_committed")
    return d("outcome_unknown", "wait", "unknown")


#: How many sends a request makes before the client gives up on a Settle that closes every connection without
#: an answer (the "unreachable" fault) at the default max_retries of 5: the first, one resend at once (a
#: connection closed before any byte of the answer), then the 5 retries.
SENDS_UNTIL_UNREACHABLE = 7


class FakeSettle:
    def __init__(self, hold_s: float = 0.05, port: int = 0) -> None:
        self.hold_s = hold_s
        self.lock = threading.Lock()
        self.requests: List[Dict[str, Any]] = []
        #: One line per request ("POST guard", "post intent", "GET decision"), for tests that add their own lines.
        self.log: List[str] = []
        self.records: List[Dict[str, Any]] = []
        self.by_event_id: Dict[str, Dict[str, Any]] = {}
        self.decisions: Dict[str, Dict[str, Any]] = {}
        #: (path, fault): the next request to `path` fails this way — "lose_answer", "unreachable", "unavailable".
        self.faults: List[Tuple[str, str]] = []
        self.guard: Guard = allow_all
        #: Verification asks waiting to be handed out (each once: leased), and the answers they got, by id.
        self.asks: List[Dict[str, Any]] = []
        self.answers: Dict[str, Dict[str, Any]] = {}
        #: Ask ids whose answer is refused with this status (409: closed meanwhile; 404: unknown).
        self.refuse_answers: Dict[str, int] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def set_decision(self, invocation_id: str, **patch: Any) -> None:
        with self.lock:
            current = self.decisions[invocation_id]
            self.decisions[invocation_id] = {**current, "version": current["version"] + 1, **patch}

    def when(self, ready: Callable[["FakeSettle"], bool], then: Callable[[], None], timeout_s: float = 10) -> None:
        """Does `then` (an operator's action, say) as soon as `ready` holds: no race with a fixed delay."""

        def watch() -> None:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                with self.lock:
                    if ready(self):
                        break
                time.sleep(0.005)
            then()

        threading.Thread(target=watch, daemon=True).start()

    def status(self, invocation_id: str) -> Optional[str]:
        """The invocation's status; call it inside `when`'s `ready` (the lock is held there)."""
        decision = self.decisions.get(invocation_id)
        return decision["status"] if decision else None

    def posts(self) -> List[Dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/api/v1/envelopes"]

    def _take_fault(self, path: str) -> Optional[str]:
        with self.lock:
            for i, (where, fault) in enumerate(self.faults):
                if where == path:
                    del self.faults[i]
                    return fault
        return None

    def _ingest(self, body: Dict[str, Any]) -> Tuple[int, Any]:
        results = []
        with self.lock:
            for index, record in enumerate(body["records"]):
                event_id = record.get("event_id") or json.dumps(record, sort_keys=True)
                if not record.get("task_id"):
                    error = {**UNAVAILABLE, "code": "MISSING_REQUIRED_FIELD", "agent_message": "task_id is required"}
                    results.append({"index": index, "status": "rejected", "event_id": record.get("event_id"), "invocation_id": None, "error": error})
                    continue
                invocation_id = record.get("invocation_id") or f"{record['task_id']}:{record.get('idempotency_key')}"
                if event_id in self.by_event_id:
                    results.append({"index": index, "status": "duplicate", "event_id": event_id, "invocation_id": invocation_id})
                    continue
                self.by_event_id[event_id] = record
                self.records.append(record)
                version = self.decisions.get(invocation_id, {}).get("version", 0) + 1
                self.decisions[invocation_id] = decide(invocation_id, record, version)
                results.append({"index": index, "status": "accepted", "event_id": event_id, "invocation_id": invocation_id})
        return 207, {"results": results}

    def _lease(self, query: Dict[str, List[str]]) -> List[Dict[str, Any]]:
        limit = int(query.get("limit", ["10"])[0])
        until = time.monotonic() + min(float(query.get("wait", ["0"])[0]), self.hold_s)
        while True:
            with self.lock:
                if self.asks or time.monotonic() >= until:
                    taken, self.asks = self.asks[:limit], self.asks[limit:]
                    return taken
            time.sleep(0.005)

    def _answer(self, ask_id: str, body: Dict[str, Any]) -> Tuple[int, Any, Dict[str, str]]:
        with self.lock:
            refused = self.refuse_answers.get(ask_id)
            if refused:
                code = "VERIFICATION_CLOSED" if refused == 409 else "NOT_FOUND"
                never = {"directive": "never", "not_before": None, "max_attempts_remaining": 0}
                return refused, {**UNAVAILABLE, "code": code, "category": "conflict", "retry": never}, {}
            self.answers[ask_id] = body
        reading = "found" if body.get("found") is True else "absent" if body.get("found") is False else "ask_again"
        return 200, {"id": ask_id, "invocation_id": "x", "state": "open", "reading": reading, "next_ask_at": None}, {}

    def _decision(self, invocation_id: str, wait_s: float, if_none_match: Optional[str]) -> Tuple[int, Any, Optional[str]]:
        until = time.monotonic() + min(wait_s, self.hold_s)
        while True:
            with self.lock:
                decision = self.decisions.get(invocation_id)
            if decision is None:
                return 404, {**UNAVAILABLE, "code": "NOT_FOUND"}, None
            etag = f'"{decision["version"]}-{decision["decision"]}"'
            if if_none_match != etag:
                return 200, decision, etag
            if time.monotonic() >= until:
                return 304, None, etag
            time.sleep(0.005)

    def _handler(self) -> type:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def answer(self, status: int, body: Any, headers: Optional[Dict[str, str]] = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def drop(self) -> None:
                self.close_connection = True

            def handle_any(self, method: str) -> None:
                url = urllib.parse.urlsplit(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw) if raw else None
                headers = {k.lower(): v for k, v in self.headers.items()}
                with fake.lock:
                    fake.requests.append({"method": method, "path": self.path, "body": body, "headers": headers})
                    records = body.get("records") if isinstance(body, dict) else None
                    fake.log.append("post " + ",".join(r.get("phase", "outcome") for r in records) if records else f"{method} {url.path.rsplit('/', 1)[-1]}")
                fault = fake._take_fault(url.path)
                if fault == "unreachable":
                    return self.drop()
                if fault == "unavailable":
                    return self.answer(503, UNAVAILABLE)
                if fault == "unauthorized":
                    return self.answer(401, {**UNAVAILABLE, "code": "UNAUTHENTICATED", "retry": {"directive": "never", "not_before": None, "max_attempts_remaining": 0}})
                status, answer, extra = self.route(method, url, body, headers)
                if fault == "lose_answer":
                    return self.drop()
                self.answer(status, answer, extra)

            def route(self, method: str, url: Any, body: Any, headers: Dict[str, str]) -> Tuple[int, Any, Dict[str, str]]:
                if url.path == "/api/v1/envelopes" and method == "POST":
                    status, answer = fake._ingest(body)
                    return status, answer, {}
                if url.path == "/api/v1/guard" and method == "POST":
                    return 200, fake.guard(body), {}
                if url.path == "/api/v1/verifications" and method == "GET":
                    return 200, {"items": fake._lease(urllib.parse.parse_qs(url.query))}, {}
                if url.path.startswith("/api/v1/verifications/") and method == "POST":
                    return fake._answer(url.path.rsplit("/", 1)[-1], body)
                prefix, suffix = "/api/v1/invocations/", "/decision"
                if url.path.startswith(prefix) and url.path.endswith(suffix):
                    invocation_id = urllib.parse.unquote(url.path[len(prefix) : -len(suffix)])
                    wait = float(urllib.parse.parse_qs(url.query).get("wait", ["0"])[0])
                    status, answer, etag = fake._decision(invocation_id, wait, headers.get("if-none-match"))
                    return status, answer, {"ETag": etag} if etag else {}
                return 404, {**UNAVAILABLE, "code": "NOT_FOUND"}, {}

            def do_GET(self) -> None:
                self.handle_any("GET")

            def do_POST(self) -> None:
                self.handle_any("POST")

        return Handler
