"""The Python and the TypeScript client send the same records for the same calls: the same fields and
the same ids. Both talk to a fake Settle that records every request (a fresh one each); the records,
the guard requests and the order of the requests are compared with their timestamps normalised."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import unittest
from typing import Any, Dict, List

import support  # noqa: F401
from settle_client import ProbeFinding
from support.clients import make_client
from support.fake_settle import FakeSettle
from support.settle_server import REPO

TS_CALLS = "packages/settle-py/tests/contract/ts_calls.ts"
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def python_calls(url: str, test: unittest.TestCase) -> None:
    """The same calls as ts_calls.ts, in the same order."""
    settle = make_client(test, url, key="stl_rk_contract", sleep=lambda s: None)
    base: Dict[str, Any] = {"tool": "create_order", "effect_class": "create", "task_id": "ord-1"}

    settle.report({"event_id": "rt:ord-1:r1", "task_id": "ord-1", "invocation_id": "inv-r1", "tool": "lookup", "envelope": {"outcome": "ok", "effect_applied": "yes"}}).result()
    settle.report([
        {"event_id": "rt:ord-1:r2", "task_id": "ord-1", "invocation_id": "inv-r2", "attempt": 1, "phase": "intent", "tool": "lookup"},
        {"task_id": "ord-1", "tool": "lookup", "idempotency_key": "bare", "envelope": {"outcome": "retryable", "effect_applied": "no", "retry_after_s": 3}},
    ]).result()
    settle.guard("ord-1", "create_order", "guard-only", effect_class="create")

    settle.wrap_tool(lambda sku: {"id": f"order-{sku}"}, idempotency_key="k-ok", **base)("a")

    def reset() -> None:
        raise ConnectionResetError("connection reset")

    settle.wrap_tool(reset, idempotency_key="k-found", probe=lambda key: ProbeFinding(True, {"id": "order-b"}), **base)()
    outcomes = iter([ConnectionResetError("connection reset"), {"id": "order-c"}])

    def flaky() -> Any:
        result = next(outcomes)
        if isinstance(result, BaseException):
            raise result
        return result

    settle.wrap_tool(flaky, idempotency_key="k-retry", probe=lambda key: ProbeFinding(False), **base)()
    settle.wrap_tool(lambda: "fast", idempotency_key="k-budget", timeout_s=5, **base)()
    reads = iter([RuntimeError("upstream 503"), {"cents": 420}])

    def read() -> Any:
        result = next(reads)
        if isinstance(result, BaseException):
            raise result
        return result

    settle.wrap_tool(read, tool="lookup_price", effect_class="read", task_id="ord-1", idempotency_key="k-read")()
    held = {"ok": False, "code": "APPROVAL_REQUIRED", "commit_state": "not_committed", "next_action": "request_approval", "safe_details": {"approve_as": {"sku": "b"}}}
    asked: List[str] = []

    def edited(sku: str) -> Any:
        asked.append(sku)
        return held if len(asked) == 1 else {"id": f"order-{sku}"}

    def approval(result: Any, context: Any) -> Any:
        return held if result.kind == "returned" and result.value is held else {"outcome": "ok", "effect_applied": "yes"}

    settle.wrap_tool(edited, idempotency_key="k-edited", classify=approval, **base)("a")
    test.assertEqual(asked, ["a", "b"])
    settle.wrap_tool(lambda: "named", idempotency_key="k-named", invocation_id="inv-explicit", **base)()
    settle.flush()


def normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<time>" if k == "at" and isinstance(v, str) and ISO.match(v) else normalised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


def sent(settle: FakeSettle) -> Dict[str, List[Any]]:
    return {
        "records": normalised(settle.records),
        "guard": normalised([r["body"] for r in settle.requests if r["path"] == "/api/v1/guard"]),
        "requests": list(settle.log),
    }


@unittest.skipIf(shutil.which("node") is None, "needs node")
class ContractTest(unittest.TestCase):
    def test_both_clients_send_the_same_records_for_the_same_calls(self) -> None:
        ts_settle, py_settle = FakeSettle(), FakeSettle()
        self.addCleanup(ts_settle.close)
        self.addCleanup(py_settle.close)

        run = subprocess.run(["node", "--import", "tsx", TS_CALLS, ts_settle.url], cwd=REPO, capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        python_calls(py_settle.url, self)

        ts, py = sent(ts_settle), sent(py_settle)
        # 3 reported + 2 ok + 3 found by the probe + 5 retried + 2 with a budget + 4 read twice
        # + 4 approved with edits + 2 named
        self.assertEqual(len(ts["records"]), 25)
        # Approved with edits: both ran the tool again with the approved arguments, which the intent carries.
        edited = [r.get("arguments") for r in ts["records"] if r.get("idempotency_key") == "k-edited" and r.get("phase") == "intent"]
        self.assertEqual(edited, [{"sku": "a"}, {"sku": "b"}])
        self.assertEqual(py["records"], ts["records"])
        # Field for field in the same order too: the same bytes but for the times.
        self.assertEqual(json.dumps(py["records"]), json.dumps(ts["records"]))
        self.assertEqual(py["guard"], ts["guard"])
        self.assertEqual(py["requests"], ts["requests"])
        # The wrapper's records carry every field of the contract, and times where they belong.
        self.assertEqual(sorted(ts["records"][-1]), ["at", "attempt", "attempt_id", "effect_class", "envelope", "event_id", "idempotency_key", "invocation_id", "phase", "task_id", "tool"])
        self.assertTrue(all(ISO.match(r["at"]) for r in py_settle.records if "at" in r))


if __name__ == "__main__":
    unittest.main()
