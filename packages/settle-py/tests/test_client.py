"""report, guard and decisions against the fake Settle (the TypeScript client's tests, ported)."""

from __future__ import annotations

import time
import unittest
from concurrent.futures import wait
from typing import Any, Dict

import support  # noqa: F401  (puts settle_client on the path)
from settle_client import SettleError, SettleUnreachable
from support.clients import make_client, recording_sleep
from support.fake_settle import FakeSettle, SENDS_UNTIL_UNREACHABLE


def record(n: int, **extra: Any) -> Dict[str, Any]:
    return {"event_id": f"rt:t1:{n}:outcome", "task_id": "t1", "invocation_id": f"inv-{n}", "tool": "create_order", "envelope": {"outcome": "ok", "effect_applied": "yes"}, **extra}


class ReportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = FakeSettle()
        self.addCleanup(self.settle.close)
        self.sleeps, sleep = recording_sleep()
        self.client = make_client(self, self.settle.url + "/", sleep=sleep)

    def test_records_reported_together_share_one_request_and_each_gets_its_own_result(self) -> None:
        a, b, c = self.client.report(record(1)), self.client.report(record(2)), self.client.report([record(3), record(1)])
        wait([a, b, c], 5)
        self.assertEqual(len(self.settle.posts()), 1)
        self.assertEqual(self.settle.posts()[0]["headers"]["authorization"], "Bearer stl_rk_test")
        self.assertEqual((a.result()["status"], a.result()["event_id"], a.result()["resent"]), ("accepted", "rt:t1:1:outcome", False))
        self.assertEqual(b.result()["event_id"], "rt:t1:2:outcome")
        self.assertEqual([r["status"] for r in c.result()], ["accepted", "duplicate"])

    def test_splits_at_the_batch_size_and_keeps_results_in_order(self) -> None:
        client = make_client(self, self.settle.url, batch_size=3)
        results = client.report([record(i) for i in range(7)]).result()
        self.assertEqual([len(p["body"]["records"]) for p in self.settle.posts()], [3, 3, 1])
        self.assertEqual([r["event_id"] for r in results], [f"rt:t1:{i}:outcome" for i in range(7)])

    def test_keeps_a_request_under_the_byte_limit(self) -> None:
        big = [record(n, envelope={"outcome": "ok", "effect_applied": "yes", "message": "x" * 300_000}) for n in range(1, 5)]
        results = self.client.report(big).result()
        self.assertEqual([len(p["body"]["records"]) for p in self.settle.posts()], [3, 1])
        self.assertTrue(all(r["status"] == "accepted" for r in results))

    def test_a_rejected_record_does_not_fail_the_others(self) -> None:
        ok, bad = self.client.report([record(1), {**record(2), "task_id": ""}]).result()
        self.assertEqual(ok["status"], "accepted")
        self.assertEqual((bad["status"], bad["error"]["code"]), ("rejected", "MISSING_REQUIRED_FIELD"))

    def test_resends_the_same_batch_after_a_lost_answer_and_says_so(self) -> None:
        self.settle.faults.append(("/api/v1/envelopes", "lose_answer"))
        result = self.client.report(record(1)).result()
        posts = self.settle.posts()
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[1]["body"], posts[0]["body"])
        self.assertEqual((result["status"], result["resent"]), ("duplicate", True))
        self.assertEqual(len(self.settle.records), 1)
        # Its connection closed before any byte of the answer: sent again at once, no back-off.
        self.assertEqual(self.sleeps, [])

    def test_waits_and_resends_on_503_with_settles_envelope(self) -> None:
        self.settle.faults += [("/api/v1/envelopes", "unavailable")] * 2
        result = self.client.report(record(1)).result()
        self.assertEqual(len(self.settle.posts()), 3)
        self.assertEqual((result["status"], result["resent"]), ("accepted", False))

    def test_without_a_spool_giving_up_is_a_settle_unreachable(self) -> None:
        client = make_client(self, self.settle.url, spool=False, sleep=lambda s: None)
        self.settle.faults += [("/api/v1/envelopes", "unreachable")] * SENDS_UNTIL_UNREACHABLE
        with self.assertRaises(SettleUnreachable) as caught:
            client.report(record(1)).result()
        self.assertEqual((caught.exception.code, caught.exception.status), ("UNREACHABLE", 0))
        self.assertEqual(len(self.settle.posts()), SENDS_UNTIL_UNREACHABLE)

    def test_with_a_spool_giving_up_keeps_the_batch_and_sends_it_when_settle_answers(self) -> None:
        self.settle.faults += [("/api/v1/envelopes", "unreachable")] * SENDS_UNTIL_UNREACHABLE
        result = self.client.report(record(1)).result()
        self.assertEqual(result["status"], "spooled")
        self.assertEqual(self.client.spooled_batches(), 1)
        self.assertEqual(self.settle.records, [])
        self.assertTrue(self.client.drain_spool())
        self.assertEqual([r["event_id"] for r in self.settle.records], ["rt:t1:1:outcome"])
        self.assertEqual(self.client.spooled_batches(), 0)

    def test_flush_and_close_send_what_is_queued(self) -> None:
        client = make_client(self, self.settle.url, batch_delay_s=30)
        future = client.report(record(1))
        self.assertTrue(client.flush(5))
        self.assertEqual(future.result(0)["status"], "accepted")
        queued = client.report(record(2))
        client.close(5)
        wait([queued], 5)
        self.assertEqual([r["event_id"] for r in self.settle.records], ["rt:t1:1:outcome", "rt:t1:2:outcome"])
        self.assertEqual(client.spooled_batches(), 0)


class GuardAndDecisionsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = FakeSettle()
        self.addCleanup(self.settle.close)
        self.client = make_client(self, self.settle.url, sleep=lambda s: None)

    def test_a_refused_request_carries_settles_envelope_and_is_not_retried(self) -> None:
        with self.assertRaises(SettleError) as caught:
            self.client.get_decision("nope")
        self.assertNotIsInstance(caught.exception, SettleUnreachable)
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "NOT_FOUND"))
        self.assertEqual(caught.exception.envelope and caught.exception.envelope["code"], "NOT_FOUND")
        self.assertEqual(len(self.settle.requests), 1)

    def test_guard_posts_the_four_fields_and_returns_the_answer(self) -> None:
        answer = self.client.guard("ord-1", "create_order", "key-1", effect_class="create")
        self.assertEqual(answer, {"allow": True, "reason": None, "invocation_id": "ord-1:key-1"})
        self.assertEqual(self.settle.requests[0]["body"], {"task_id": "ord-1", "tool": "create_order", "idempotency_key": "key-1", "effect_class": "create"})

    def test_await_decision_long_polls_with_the_last_etag_until_it_is_no_longer_wait(self) -> None:
        self.client.report(record(1, phase="intent", envelope=None)).result()
        # Changed while the client holds a poll (the first read is answered at once).
        self.settle.when(lambda s: any("wait=" in r["path"] for r in s.requests), lambda: self.settle.set_decision("inv-1", status="reconciled", decision="retry_allowed"))
        decision = self.client.await_decision("inv-1", timeout_s=5)
        self.assertEqual((decision["decision"], decision["status"]), ("retry_allowed", "reconciled"))
        polls = [r for r in self.settle.requests if r["path"].startswith("/api/v1/invocations/inv-1/decision")]
        self.assertEqual(polls[0]["path"], "/api/v1/invocations/inv-1/decision")
        for poll in polls[1:]:
            self.assertRegex(poll["path"], r"\?wait=[1-5]$")
        self.assertEqual(polls[1]["headers"]["if-none-match"], '"1-wait"')

    def test_await_decision_returns_the_last_decision_when_the_time_runs_out(self) -> None:
        self.client.report(record(1, phase="intent", envelope=None)).result()
        started = time.monotonic()
        decision = self.client.await_decision("inv-1", timeout_s=0.3)
        self.assertEqual(decision["decision"], "wait")
        self.assertLess(time.monotonic() - started, 3)

    def test_an_id_is_one_escaped_path_segment(self) -> None:
        with self.assertRaises(SettleError):
            self.client.get_decision("a/b c")
        self.assertEqual(self.settle.requests[0]["path"], "/api/v1/invocations/a%2Fb%20c/decision")


if __name__ == "__main__":
    unittest.main()
