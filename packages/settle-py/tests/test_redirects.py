"""A redirect never carries the runtime key anywhere: Settle's API does not redirect, so the client
follows none (urllib's default handler would copy Authorization to whatever host a 3xx names)."""

from __future__ import annotations

import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List

import support  # noqa: F401
from settle_client import SettleError
from support.clients import make_client


class _Recorder(BaseHTTPRequestHandler):
    """Answers every request with `answer` and keeps each request's path and Authorization header."""

    seen: List[Dict[str, str]]
    answer: "tuple[int, Dict[str, str]]"

    def _handle(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        self.seen.append({"path": self.path, "authorization": self.headers.get("authorization") or ""})
        status, headers = self.answer
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_POST = _handle

    def log_message(self, *args: object) -> None:
        pass


def serve(test: unittest.TestCase, status: int, headers: Dict[str, str]) -> "tuple[str, List[Dict[str, str]]]":
    seen: List[Dict[str, str]] = []
    handler = type("Handler", (_Recorder,), {"seen": seen, "answer": (status, headers)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    test.addCleanup(server.server_close)
    test.addCleanup(server.shutdown)
    return f"http://127.0.0.1:{server.server_address[1]}", seen


class RedirectTest(unittest.TestCase):
    def test_a_redirect_to_another_host_is_refused_and_the_key_never_leaves(self) -> None:
        elsewhere, taken = serve(self, 200, {"content-type": "application/json"})
        for status in (301, 302, 303, 307, 308):
            with self.subTest(status=status):
                settle, seen = serve(self, status, {"location": f"{elsewhere}/collect"})
                client = make_client(self, settle, max_retries=0, spool=False)
                with self.assertRaises(SettleError) as caught:
                    client.get_decision("inv-1")
                self.assertEqual((caught.exception.code, caught.exception.status), ("REDIRECT_REFUSED", status))
                self.assertIn(f"{elsewhere}/collect", str(caught.exception))
                self.assertEqual(len(seen), 1)
        self.assertEqual(taken, [])

    def test_a_redirect_to_the_same_server_is_not_followed_either(self) -> None:
        settle, seen = serve(self, 307, {"location": "/api/v1/elsewhere"})
        client = make_client(self, settle, max_retries=0, spool=False)
        with self.assertRaises(SettleError) as caught:
            client.get_decision("inv-1")
        self.assertEqual(caught.exception.code, "REDIRECT_REFUSED")
        self.assertEqual([s["path"] for s in seen], ["/api/v1/invocations/inv-1/decision"])


if __name__ == "__main__":
    unittest.main()
