"""Records reported close together travel in one request.

Up to `batch_size` records and `max_bytes` of JSON per request, sent one request at a time by a
background thread; each record's future is settled with its own result from Settle's 207. When Settle
cannot be reached, a batch goes to the spool (its futures then say `spooled`) instead of being lost.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple, cast

from .errors import SettleError, SettleUnreachable
from .http import encode_json
from .wire import RecordResult, ReportResult, SettleRecord

SendBatch = Callable[[List[SettleRecord]], Tuple[List[RecordResult], bool]]
KeepBatch = Callable[[List[SettleRecord]], object]


@dataclass(eq=False)
class Entry:
    record: SettleRecord
    size: int
    future: "Future[ReportResult]"
    #: May wait in the spool when Settle is away (a fail-closed intent may not: no call follows it).
    spool: bool


class Batcher:
    def __init__(
        self,
        send: SendBatch,
        keep: Optional[KeepBatch],
        on_sent: Callable[[], None],
        batch_size: int,
        max_bytes: int,
        delay_s: float,
    ) -> None:
        self.send = send
        self.keep = keep
        self.on_sent = on_sent
        self.batch_size = batch_size
        self.max_bytes = max_bytes
        self.delay_s = delay_s
        self._cond = threading.Condition()
        self._queue: List[Entry] = []
        self._inflight: List[Entry] = []
        self._urgent = False
        self._closed = False
        self._thread: Optional[threading.Thread] = None

    def add(self, records: List[SettleRecord], spool: bool = True) -> List["Future[ReportResult]"]:
        entries = [Entry(r, len(encode_json(r)), Future(), spool) for r in records]
        with self._cond:
            if self._closed:
                closing = True
            else:
                closing = False
                self._queue.extend(entries)
                if self._thread is None:
                    self._start_sender()
                self._cond.notify_all()
        if closing:
            self._keep_or_fail(entries, SettleUnreachable("the client is closed", code="CLOSED"))
        return [e.future for e in entries]

    def _start_sender(self) -> None:
        thread = threading.Thread(target=self._run, name="settle-report", daemon=True)
        try:
            thread.start()
        except RuntimeError:
            # The interpreter is exiting (an atexit handler reporting): close() spools the queue.
            return
        self._thread = thread

    def flush(self, timeout_s: Optional[float] = None) -> bool:
        """Sends everything queued now; True once all of it is answered (or spooled) within `timeout_s`."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            if self._thread is None:
                return not self._queue
            self._urgent = True
            self._cond.notify_all()
            while self._queue or self._inflight:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout_s: float) -> None:
        """Stops the sender. Whatever is still queued is spooled at once; a send still running after
        `timeout_s` is spooled too (it may land as well, which Settle's dedupe makes harmless)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._closed = True
            unsent, self._queue = self._queue, []
            self._cond.notify_all()
        self._keep_or_fail(unsent, SettleUnreachable("the client closed before this was sent", code="CLOSED"))
        with self._cond:
            while self._inflight and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            stuck = [e for e in self._inflight if e.spool]
        if stuck and self.keep is not None:
            self.keep([e.record for e in stuck])

    def _take_chunks(self) -> List[List[Entry]]:
        chunks: List[List[Entry]] = []
        chunk: List[Entry] = []
        size = 0
        for entry in self._queue:
            if chunk and (len(chunk) >= self.batch_size or size + entry.size > self.max_bytes):
                chunks.append(chunk)
                chunk, size = [], 0
            chunk.append(entry)
            size += entry.size + 1
        if chunk:
            chunks.append(chunk)
        self._queue = []
        return chunks

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue:
                    return
                if not self._urgent and len(self._queue) < self.batch_size:
                    self._cond.wait(self.delay_s)
                chunks = self._take_chunks()
                self._urgent = False
                self._inflight = [e for chunk in chunks for e in chunk]
            for chunk in chunks:
                self._send_chunk(chunk)
            with self._cond:
                self._inflight = []
                self._cond.notify_all()

    def _send_chunk(self, chunk: List[Entry]) -> None:
        try:
            results, resent = self.send([e.record for e in chunk])
        except SettleUnreachable as error:
            self._keep_or_fail(chunk, error)
            return
        except BaseException as error:  # a refusal, or a bug: every waiting caller hears of it
            for entry in chunk:
                entry.future.set_exception(error)
            return
        self.on_sent()
        by_index = {r.get("index"): r for r in results}
        for index, entry in enumerate(chunk):
            result = by_index.get(index)
            if result is None:
                entry.future.set_exception(SettleError(f"Settle's answer has no result for record {index} of the batch", code="NO_RESULT"))
            else:
                entry.future.set_result(cast(ReportResult, {**result, "resent": resent}))

    def _keep_or_fail(self, entries: List[Entry], error: SettleError) -> None:
        kept = [e for e in entries if e.spool and self.keep is not None]
        for entry in entries:
            if entry not in kept:
                entry.future.set_exception(error)
        if not kept or self.keep is None:
            return
        try:
            self.keep([e.record for e in kept])
        except OSError as io:
            failed = SettleUnreachable(f"{error.message}; and the spool could not be written: {io}", code="SPOOL_FAILED")
            for entry in kept:
                entry.future.set_exception(failed)
            return
        for index, entry in enumerate(kept):
            spooled: ReportResult = {
                "index": index,
                "status": "spooled",
                "event_id": entry.record.get("event_id"),
                "invocation_id": entry.record.get("invocation_id"),
                "resent": False,
            }
            entry.future.set_result(spooled)
