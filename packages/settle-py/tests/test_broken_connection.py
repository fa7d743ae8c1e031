"""A connection that breaks before any byte of Settle's answer (reset, or closed without a response) is
sent again at once, once, on a new connection, whatever max_retries says (docs/outcome-model.md §5); one
whose answer had begun is not resent that way."""

from __future__ import annotations

import json
import socket
import struct
import threading
import unittest
from typing import Callable, List

import support  # noqa: F401
from settle_client import SettleUnreachable
from settle_client.http import AnswerBrokeOff, connection_broke
from support.clients import make_client, recording_sleep

# What the stand-in does with each connection, in order: "reset" (RST under the request), "close" (FIN,
# no answer), "truncate" (a status line and half a body, then RST) or "answer" (Settle's 207).
Behaviour = str


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        body += conn.recv(65536)
    return body


def _reset(conn: socket.socket) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def serve(test: unittest.TestCase, behaviours: List[Behaviour]) -> "tuple[str, List[Behaviour]]":
    """A raw-socket Settle: one connection per request (urllib's way), each treated as `behaviours` says."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    seen: List[Behaviour] = []

    def run() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            body = _read_request(conn)
            behaviour = behaviours[len(seen)] if len(seen) < len(behaviours) else "answer"
            seen.append(behaviour)
            if behaviour == "reset":
                _reset(conn)
                continue
            if behaviour == "close":
                conn.close()
                continue
            records = json.loads(body or b"{}").get("records", [])
            results = [{"index": i, "status": "accepted", "event_id": r.get("event_id"), "invocation_id": r.get("invocation_id")} for i, r in enumerate(records)]
            payload = json.dumps({"results": results}).encode()
            head = f"HTTP/1.1 207 Multi-Status\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\nconnection: close\r\n\r\n".encode()
            if behaviour == "truncate":
                conn.sendall(head + payload[: len(payload) // 2])
                _reset(conn)
                continue
            conn.sendall(head + payload)
            conn.close()

    threading.Thread(target=run, daemon=True).start()
    test.addCleanup(listener.close)
    return f"http://127.0.0.1:{listener.getsockname()[1]}", seen


def record(n: int) -> "dict[str, object]":
    return {"event_id": f"rt:t:{n}:outcome", "task_id": "t", "invocation_id": f"inv-{n}", "tool": "read_price", "envelope": {"outcome": "ok"}}


class BrokenConnectionTest(unittest.TestCase):
    def client(self, url: str, max_retries: int) -> "tuple[object, List[float]]":
        sleeps, sleep = recording_sleep()
        return make_client(self, url, max_retries=max_retries, sleep=sleep, spool=False), sleeps

    def test_a_reset_or_a_close_before_the_answer_is_sent_again_at_once_even_with_no_retries(self) -> None:
        for broken in ("reset", "close"):
            with self.subTest(broken=broken):
                url, seen = serve(self, [broken])
                client, sleeps = self.client(url, 0)
                result = client.report(record(1)).result(10)  # type: ignore[attr-defined]
                self.assertEqual((result["status"], result["resent"]), ("accepted", True))
                self.assertEqual(seen, [broken, "answer"])
                self.assertEqual(sleeps, [])

    def test_only_once_a_second_break_follows_the_retries_and_their_back_off(self) -> None:
        url, seen = serve(self, ["reset", "reset"])
        client, sleeps = self.client(url, 0)
        with self.assertRaises(SettleUnreachable):
            client.get_decision("inv-1")  # type: ignore[attr-defined]
        self.assertEqual((seen, sleeps), (["reset", "reset"], []))

        url, seen = serve(self, ["close", "reset"])
        client, sleeps = self.client(url, 1)
        result = client.report(record(2)).result(10)  # type: ignore[attr-defined]
        self.assertEqual((result["status"], seen, sleeps), ("accepted", ["close", "reset", "answer"], [0.25]))

    def test_an_answer_that_broke_off_midway_is_not_a_broken_connection(self) -> None:
        url, seen = serve(self, ["truncate"])
        client, sleeps = self.client(url, 0)
        with self.assertRaises(SettleUnreachable):
            client.get_decision("inv-1")  # type: ignore[attr-defined]
        self.assertEqual((seen, sleeps), (["truncate"], []))

    def test_what_counts_as_broken(self) -> None:
        import urllib.error

        broken: Callable[[BaseException], bool] = connection_broke
        self.assertTrue(broken(ConnectionResetError()))
        self.assertTrue(broken(urllib.error.URLError(BrokenPipeError())))
        self.assertFalse(broken(ConnectionRefusedError()))
        self.assertFalse(broken(urllib.error.URLError(ConnectionRefusedError())))
        self.assertFalse(broken(socket.timeout()))
        self.assertFalse(broken(AnswerBrokeOff("midway")))


if __name__ == "__main__":
    unittest.main()
