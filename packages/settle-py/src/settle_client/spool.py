"""The local spool: batches Settle could not take, kept on disk until it can.

One file per batch, written to a temporary name, fsynced, then renamed into place (and the directory
fsynced), so a crash mid-write leaves either the whole batch or nothing under its final name. Sending
a spooled batch twice (two processes, or a crash between Settle's answer and the delete) is harmless:
Settle keeps one record per event id, and one per record hash without one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable, List, Optional

from .errors import SettleError, SettleUnreachable
from .wire import RecordResult, SettleRecord

log = logging.getLogger("settle_client")

#: A temporary file this old was left by a writer that died before renaming it.
STALE_TMP_S = 600.0

_counter = itertools.count()


def default_spool_dir() -> Path:
    return Path(os.environ.get("SETTLE_SPOOL_DIR") or Path.home() / ".settle" / "spool")


def spool_namespace(url: str, key: str) -> str:
    """Batches are kept per Settle and per key, so they are only ever sent with the key that reported them."""
    return hashlib.sha256(f"{url.rstrip('/')}\n{key}".encode("utf-8")).hexdigest()[:16]


class Spool:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _ensure(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)

    def write(self, records: List[SettleRecord]) -> Path:
        """Keeps one batch; returns once it is on disk."""
        self._ensure()
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}"
        tmp = self.directory / f".{name}.tmp"
        final = self.directory / f"{name}.json"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, json.dumps({"records": records}, separators=(",", ":")).encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, final)
        self._sync_directory()
        return final

    def _sync_directory(self) -> None:
        try:
            fd = os.open(self.directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass  # Some filesystems cannot fsync a directory; the rename is still atomic.
        finally:
            os.close(fd)

    def pending(self) -> List[Path]:
        """Batches waiting, oldest first. Temporary files are never read; stale ones are removed."""
        try:
            entries = list(os.scandir(self.directory))
        except FileNotFoundError:
            return []
        now = time.time()
        for entry in entries:
            if entry.name.endswith(".tmp") and now - _mtime(entry.path) > STALE_TMP_S:
                _remove(Path(entry.path))
        return sorted(Path(e.path) for e in entries if e.name.endswith(".json"))

    def read(self, path: Path) -> Optional[List[SettleRecord]]:
        """A batch's records; None when it is gone (another process sent it) or unreadable (set aside as .bad)."""
        try:
            data = json.loads(path.read_text(encoding="ascii"))
            records: List[SettleRecord] = data["records"]
            return records
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            log.error("settle_client: spooled batch %s is unreadable; set aside as .bad", path)
            _rename(path, path.with_suffix(".bad"))
            return None

    def remove(self, path: Path) -> None:
        _remove(path)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return time.time()


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _rename(path: Path, target: Path) -> None:
    try:
        os.replace(path, target)
    except FileNotFoundError:
        pass


SendBatch = Callable[[List[SettleRecord]], List[RecordResult]]


class Drainer:
    """Sends spooled batches, oldest first, in a background thread, backing off while Settle is away."""

    def __init__(self, spool: Spool, send: SendBatch, retry_s: float = 5.0, max_retry_s: float = 60.0) -> None:
        self.spool = spool
        self.send = send
        self.retry_s = retry_s
        self.max_retry_s = max_retry_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._draining = threading.Lock()

    def start(self, wait_first: bool = False) -> None:
        """Starts the sender; `wait_first` when Settle has just failed every try, so a try now would be wasted."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, args=(wait_first,), name="settle-spool", daemon=True)
                self._thread.start()

    def wake(self) -> None:
        """Settle answered again: try the spool now."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def drain_once(self, deadline: Optional[float] = None) -> bool:
        """Sends every waiting batch; False as soon as one cannot be sent (it stays for the next try)."""
        wait = -1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._draining.acquire(timeout=wait):
            return False
        try:
            return self._drain(deadline)
        finally:
            self._draining.release()

    def _drain(self, deadline: Optional[float]) -> bool:
        for path in self.spool.pending():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            records = self.spool.read(path)
            if records is None:
                continue
            try:
                results = self.send(records)
            except SettleUnreachable as error:
                log.info("settle_client: %d spooled record(s) not sent yet: %s", len(records), error)
                return False
            except SettleError as error:
                log.warning("settle_client: Settle refused %d spooled record(s), kept for later: %s", len(records), error)
                return False
            for result in results:
                if result.get("status") == "rejected":
                    log.error("settle_client: Settle rejected spooled record %s: %s", result.get("event_id"), result.get("error"))
            self.spool.remove(path)
        return True

    def _run(self, wait_first: bool) -> None:
        delay = self.retry_s
        if wait_first:
            self._wake.wait(delay)
            self._wake.clear()
        while not self._stop.is_set():
            if self.drain_once():
                delay = self.retry_s
            else:
                delay = min(delay * 2, self.max_retry_s)
            # Another process may spool into the same directory, so look again now and then even when idle.
            self._wake.wait(delay)
            self._wake.clear()
