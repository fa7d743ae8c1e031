"""A fake business system behind the fixtures' tools, over real HTTP, with source article 002 (docs/outcome-model.md)'s "six failures
worth injecting on purpose" (the Python port of examples/agent-runtime/fake-shop.ts). It counts every
effect it applies, so a test can prove nothing happened twice. Only /messages deduplicates by key;
everywhere else a blind retry would apply the effect again.

Failures, injected into the next request carrying a key:
  {"kind": "kill_mid_call", "lands": bool}  1. the connection drops; the effect landed (or not) first
  {"kind": "duplicate_delivery"}            2. the network delivers the request twice
  {"kind": "slow", "ms": int}               4. the answer (and the effect) comes late
  {"kind": "rate_limit", "retry_after_s": n} 6. 429 with Retry-After, nothing applied
3 (200 with an error body) and 5 (a partial batch) come from the data: an unknown SKU, a merged cell.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

CATALOG = {"sku-1", "sku-2", "sku-3"}
#: A row the sheet refuses for good, and one that is locked the first time it is written.
MERGED_CELL = "row_13"
LOCKED_ONCE = "row_15"

Answer = Tuple[int, Dict[str, str], Any]


class FakeShop:
    def __init__(self, on_call: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        self.on_call = on_call
        self.lock = threading.Lock()
        self.applied: Dict[str, List[Any]] = {}
        self.failures: Dict[str, Dict[str, Any]] = {}
        self.locked = {LOCKED_ONCE}
        self.delivered: List[Dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def inject(self, key: str, failure: Dict[str, Any]) -> None:
        with self.lock:
            self.failures[key] = failure

    def effects(self, key: str) -> int:
        """How many times the effect with this key was applied."""
        with self.lock:
            return len(self.applied.get(key, []))

    def deliveries(self, key: Optional[str] = None) -> List[Dict[str, Any]]:
        with self.lock:
            return [d for d in self.delivered if key is None or d["key"] == key]

    def find_by_key(self, key: str) -> Any:
        with self.lock:
            found = self.applied.get(key)
            return found[0] if found else None

    def row_writes(self, row: str) -> int:
        """How many times a row was written, under any key."""
        return self.effects(f"row:{row}")

    def _apply(self, key: str, effect: Any) -> Any:
        with self.lock:
            self.applied.setdefault(key, []).append(effect)
        return effect

    def _handle(self, op: str, key: str, body: Dict[str, Any]) -> Answer:
        if op == "orders":
            if body.get("sku") not in CATALOG:
                # 3. The transport succeeded, the operation did not.
                return 200, {}, {"code": "INVALID_SKU", "message": f"SKU {body.get('sku')} does not exist.", "retryable": False, "hint": "Look the SKU up first.", "field": "sku"}
            return 201, {}, self._apply(key, {"id": f"ord_{key[:8]}", **body})
        if op == "messages":
            # This receiver recognises a repeat by key: one message, and the same ok answer again.
            with self.lock:
                sent = (self.applied.get(key) or [None])[0]
            return 200, {}, sent if sent is not None else self._apply(key, {"id": f"msg_{key[:8]}", **body})
        if op in ("charges", "invoices"):
            return 201, {}, self._apply(key, {"id": f"{op[:2]}_{key[:8]}", **body})
        if op == "rows":
            items = []
            for row in body["rows"]:
                if row == MERGED_CELL:
                    items.append({"id": row, "applied": "no", "reason": "merged cell", "retryable": False})
                    continue
                with self.lock:
                    was_locked = row in self.locked
                    self.locked.discard(row)
                if was_locked:
                    items.append({"id": row, "applied": "no", "reason": "row locked", "retryable": True})
                    continue
                self._apply(f"row:{row}", {"row": row, "key": key})
                items.append({"id": row, "applied": "yes"})
            return 207, {}, {"items": items}
        return 404, {}, {"type": "about:blank", "title": "Not Found", "status": 404}

    def _deliver(self, op: str, key: str, body: Dict[str, Any]) -> Optional[Answer]:
        """The injected failure for the key, then the handler (which applies the effect). None: the connection drops."""
        with self.lock:
            failure = self.failures.pop(key, None)
            delivery = {"op": op, "key": key, "at": time.time()}
            self.delivered.append(delivery)
        if self.on_call:
            self.on_call(delivery)
        kind = (failure or {}).get("kind")
        if kind == "kill_mid_call":
            if failure and failure["lands"]:
                self._handle(op, key, body)
            return None
        if kind == "duplicate_delivery":
            self._handle(op, key, body)
            with self.lock:
                self.delivered.append({"op": op, "key": key, "at": time.time()})
        elif kind == "slow" and failure:
            time.sleep(failure["ms"] / 1000)
        elif kind == "rate_limit" and failure:
            wait = failure["retry_after_s"]
            return 429, {"Retry-After": str(wait)}, {"type": "about:blank", "title": "Too Many Requests", "status": 429, "detail": f"Retry after {wait} s."}
        return self._handle(op, key, body)

    def _handler(self) -> type:
        shop = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def send(self, status: int, headers: Dict[str, str], body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                key = urllib.parse.parse_qs(url.query).get("key", [""])[0]
                found = shop.find_by_key(key)
                self.send(200 if found is not None else 404, {}, found if found is not None else {"type": "about:blank", "title": "Not Found", "status": 404})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                answer = shop._deliver(self.path.strip("/"), self.headers.get("Idempotency-Key", ""), json.loads(raw or b"{}"))
                if answer is None:
                    self.close_connection = True
                    return
                self.send(*answer)

        return Handler
