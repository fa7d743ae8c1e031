"""The spool: whole batches or nothing (even when the writer is killed mid-write), kept per Settle
and key, sent when Settle answers again, and left for the next process when it does not."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path
from typing import Any, Dict

import support
from settle_client.spool import STALE_TMP_S, Spool, spool_namespace
from support.clients import free_port, make_client
from support.fake_settle import FakeSettle, SENDS_UNTIL_UNREACHABLE


def record(n: int) -> Dict[str, Any]:
    return {"event_id": f"spool:{n}", "task_id": "t1", "invocation_id": f"inv-{n}", "tool": "create_order", "envelope": {"outcome": "ok", "effect_applied": "yes"}}


def run_python(code: str, env: Dict[str, str]) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**os.environ, "PYTHONPATH": str(support.SRC), **env}, capture_output=True, text=True, timeout=60)


class SpoolFilesTest(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory(prefix="settle-py-spool-")
        self.addCleanup(directory.cleanup)
        self.dir = Path(directory.name)
        self.spool = Spool(self.dir / "ns")

    def test_batches_come_back_whole_oldest_first_readable_only_by_the_owner(self) -> None:
        first = self.spool.write([record(1), record(2)])
        self.spool.write([record(3)])
        pending = self.spool.pending()
        self.assertEqual(pending[0], first)
        self.assertEqual([self.spool.read(p) for p in pending], [[record(1), record(2)], [record(3)]])
        self.assertEqual(stat.S_IMODE(first.stat().st_mode), 0o600)
        self.assertEqual(stat.S_IMODE((self.dir / "ns").stat().st_mode), 0o700)

    def test_a_temporary_file_left_by_a_dead_writer_is_never_read_and_removed_when_stale(self) -> None:
        self.spool.write([record(1)])
        tmp = self.dir / "ns" / ".00000000000000000001-1-000000.tmp"
        tmp.write_text('{"records": [{"event_id": "half')
        self.assertEqual(len(self.spool.pending()), 1)
        self.assertTrue(tmp.exists())
        old = time.time() - STALE_TMP_S - 1
        os.utime(tmp, (old, old))
        self.assertEqual(len(self.spool.pending()), 1)
        self.assertFalse(tmp.exists())

    def test_an_unreadable_batch_is_set_aside_not_sent_and_not_lost(self) -> None:
        path = self.spool.write([record(1)])
        path.write_text("not json")
        with self.assertLogs("settle_client", "ERROR"):
            self.assertIsNone(self.spool.read(path))
        self.assertEqual(self.spool.pending(), [])
        self.assertTrue(path.with_suffix(".bad").exists())

    def test_a_writer_killed_mid_write_leaves_only_whole_batches(self) -> None:
        writer = """
            import sys
            from pathlib import Path
            from settle_client.spool import Spool
            spool = Spool(Path(sys.argv[1]))
            big = "x" * 200_000
            n = 0
            while True:
                spool.write([{"event_id": f"e{n}-{i}", "task_id": "t", "tool": "x", "envelope": {"message": big}} for i in range(5)])
                n += 1
                print(n, flush=True)
        """
        target = self.dir / "killed"
        # Kill the writer until one kill lands mid-write (a temporary file is left), at most ten times.
        for _ in range(10):
            child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(writer), str(target)], env={**os.environ, "PYTHONPATH": str(support.SRC)}, stdout=subprocess.PIPE, text=True)
            assert child.stdout is not None
            child.stdout.readline()  # at least one batch is on disk
            time.sleep(0.05)
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
            if list(target.glob(".*.tmp")):
                break
        self.assertTrue(list(target.glob(".*.tmp")), "no kill landed mid-write")
        spool = Spool(target)
        batches = spool.pending()
        self.assertGreaterEqual(len(batches), 1)
        for path in batches:
            records = spool.read(path)
            self.assertIsNotNone(records, path)
            self.assertEqual(len(records or []), 5)
            self.assertEqual(len((records or [])[0]["envelope"]["message"]), 200_000)

    def test_batches_are_kept_per_settle_and_key(self) -> None:
        self.assertNotEqual(spool_namespace("http://a", "k1"), spool_namespace("http://a", "k2"))
        self.assertNotEqual(spool_namespace("http://a", "k1"), spool_namespace("http://b", "k1"))
        self.assertEqual(spool_namespace("http://a/", "k1"), spool_namespace("http://a", "k1"))


class SpoolWithClientTest(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory(prefix="settle-py-spool-")
        self.addCleanup(directory.cleanup)
        self.spool_dir = directory.name

    def test_what_a_process_spooled_at_exit_is_sent_by_the_next_one(self) -> None:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        # Settle is not there: the first process reports, exits, and its atexit handler spools the batch.
        first = run_python(
            f"""
            from settle_client import Settle
            settle = Settle({url!r}, "stl_rk_test", spool_dir={self.spool_dir!r}, max_retries=1, sleep=lambda s: None)
            settle.report([{json.dumps(record(1))}, {json.dumps(record(2))}])
            """,
            {},
        )
        self.assertEqual(first.returncode, 0, first.stderr)
        namespace = Path(self.spool_dir) / spool_namespace(url, "stl_rk_test")
        self.assertEqual(len(list(namespace.glob("*.json"))), 1)

        settle = FakeSettle(port=port)
        self.addCleanup(settle.close)
        client = make_client(self, url, spool_dir=self.spool_dir)
        deadline = time.monotonic() + 10
        while (len(settle.records) < 2 or client.spooled_batches()) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual([r["event_id"] for r in settle.records], ["spool:1", "spool:2"])
        self.assertEqual(client.spooled_batches(), 0)
        # Another key's client never sends this runtime's batches.
        self.assertEqual(make_client(self, url, key="stl_rk_other", spool_dir=self.spool_dir).spooled_batches(), 0)

    def test_a_report_just_before_exit_is_flushed_by_atexit(self) -> None:
        settle = FakeSettle()
        self.addCleanup(settle.close)
        done = run_python(
            f"""
            from settle_client import Settle
            Settle({settle.url!r}, "stl_rk_test", spool_dir={self.spool_dir!r}, batch_delay_s=30).report({json.dumps(record(7))})
            """,
            {},
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([r["event_id"] for r in settle.records], ["spool:7"])

    def test_settle_answering_again_wakes_the_spool_at_once(self) -> None:
        settle = FakeSettle()
        self.addCleanup(settle.close)
        client = make_client(self, settle.url, spool_dir=self.spool_dir, spool_retry_s=60, sleep=lambda s: None)
        settle.faults += [("/api/v1/envelopes", "unreachable")] * SENDS_UNTIL_UNREACHABLE
        self.assertEqual(client.report(record(1)).result()["status"], "spooled")
        self.assertEqual(client.report(record(2)).result()["status"], "accepted")
        deadline = time.monotonic() + 5
        while client.spooled_batches() and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(sorted(r["event_id"] for r in settle.records), ["spool:1", "spool:2"])


if __name__ == "__main__":
    unittest.main()
