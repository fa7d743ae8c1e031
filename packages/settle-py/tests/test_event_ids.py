"""Event ids are stable: the same run sends the same ids, a resend or a spooled copy is the same
record byte for byte, and a record without an id is never given one (Settle hashes it)."""

from __future__ import annotations

import json
import unittest
from typing import Any, Dict, List

import support  # noqa: F401
from settle_client import ProbeFinding
from support.clients import make_client
from support.fake_settle import FakeSettle, SENDS_UNTIL_UNREACHABLE


def play(test: unittest.TestCase) -> List[Dict[str, Any]]:
    settle = FakeSettle()
    test.addCleanup(settle.close)
    client = make_client(test, settle.url, sleep=lambda s: None)
    outcomes = iter([ConnectionResetError("reset"), "ok"])

    def create() -> str:
        result = next(outcomes)
        if isinstance(result, BaseException):
            raise result
        return result

    client.wrap_tool(create, effect_class="create", task_id="ord-1", idempotency_key="key-1", probe=lambda key: ProbeFinding(False))()
    return settle.records


class EventIdTest(unittest.TestCase):
    def test_two_runs_of_the_same_calls_send_the_same_ids(self) -> None:
        first, second = play(self), play(self)
        self.assertEqual([r["event_id"] for r in first], [r["event_id"] for r in second])
        self.assertEqual([r["event_id"] for r in first], ["ord-1:key-1:a1:intent", "ord-1:key-1:a1:outcome", "ord-1:key-1:a1:probe:v2", "ord-1:key-1:a2:intent", "ord-1:key-1:a2:outcome"])
        strip = lambda rs: [{k: v for k, v in r.items() if k != "at"} for r in rs]  # noqa: E731
        self.assertEqual(strip(first), strip(second))

    def test_a_spooled_record_is_sent_exactly_as_it_was_reported(self) -> None:
        settle = FakeSettle()
        self.addCleanup(settle.close)
        client = make_client(self, settle.url, sleep=lambda s: None)
        settle.faults += [("/api/v1/envelopes", "unreachable")] * SENDS_UNTIL_UNREACHABLE
        bare = {"task_id": "t1", "tool": "lookup", "idempotency_key": "k", "envelope": {"outcome": "ok", "effect_applied": "yes", "message": "é ✓"}}
        self.assertEqual(client.report(dict(bare)).result()["status"], "spooled")
        client.drain_spool()
        self.assertEqual(settle.records, [bare])
        self.assertNotIn("event_id", settle.records[0])
        attempts = [json.dumps(r["body"], sort_keys=True) for r in settle.posts()]
        self.assertEqual(len(set(attempts)), 1)

    def test_a_bare_record_sent_twice_is_one_record(self) -> None:
        settle = FakeSettle()
        self.addCleanup(settle.close)
        client = make_client(self, settle.url)
        bare = {"task_id": "t1", "tool": "lookup", "envelope": {"outcome": "ok", "effect_applied": "yes"}}
        statuses = [client.report(dict(bare)).result()["status"] for _ in range(2)]
        self.assertEqual(statuses, ["accepted", "duplicate"])


if __name__ == "__main__":
    unittest.main()
