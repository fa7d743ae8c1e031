"""A real Settle for the integration tests: `node bin/settle-server.mjs` of this checkout's build on
a PostgreSQL database of its own (created, migrated and dropped here), started and stopped by the
tests, so that data survives a restart. One per test run, shared by the modules that need it.

Needs `node`, PostgreSQL at SETTLE_PY_PG (default postgresql://postgres@127.0.0.1:5432/postgres) and
`next build`. Without a build the integration tests are skipped, unless SETTLE_PY_REQUIRE_SERVER=1
(npm test sets it after its build step), which makes a missing build a failure.
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional

from .clients import free_port

REPO = Path(__file__).resolve().parents[4]
PG_ADMIN_URL = os.environ.get("SETTLE_PY_PG", "postgresql://postgres@127.0.0.1:5432/postgres")

# Creating and dropping a database goes through node's pg (a dependency of Settle): no psql needed.
ADMIN_SQL = """
import pg from "pg";
const client = new pg.Client(process.env.PG_ADMIN_URL);
await client.connect();
try { await client.query(process.env.SQL); } finally { await client.end(); }
"""


def _node(args: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 120) -> str:
    run = subprocess.run(["node", *args], cwd=REPO, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(f"node {' '.join(args)} failed ({run.returncode}): {run.stderr.strip()}")
    return run.stdout.strip()


def _admin_sql(sql: str) -> None:
    _node(["--input-type=module", "-e", ADMIN_SQL], {"PG_ADMIN_URL": PG_ADMIN_URL, "SQL": sql})


class SettleServer:
    def __init__(self) -> None:
        self.database = f"settle_py_{secrets.token_hex(6)}"
        base = PG_ADMIN_URL.rsplit("/", 1)[0]
        self.database_url = f"{base}/{self.database}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.secret = secrets.token_hex(24)
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.log = tempfile.NamedTemporaryFile(prefix="settle-py-server-", suffix=".log", delete=False)
        self.key = ""
        self.token = ""

    def create(self) -> None:
        """The database, migrated, with a runtime key and an operator's token (each CLI run takes seconds: side by side)."""
        _admin_sql(f"CREATE DATABASE {self.database}")
        env = {"DATABASE_URL": self.database_url}
        _node(["bin/settle.mjs", "migrate"], env)

        def operator_token() -> str:
            _node(["bin/settle.mjs", "users", "create", "--email", "ana@example.com", "--role", "operator", "--password", secrets.token_hex(12)], env)
            return _node(["bin/settle.mjs", "tokens", "create", "--email", "ana@example.com"], env)

        with ThreadPoolExecutor(2) as pool:
            key = pool.submit(_node, ["bin/settle.mjs", "keys", "create", "py-runtime"], env)
            token = pool.submit(operator_token)
            self.key = key.result().splitlines()[-1].strip()
            self.token = token.result().splitlines()[-1].strip()

    def new_key(self, runtime: str) -> str:
        """A key of another runtime: the guard judges each runtime's keys apart."""
        return _node(["bin/settle.mjs", "keys", "create", runtime], {"DATABASE_URL": self.database_url}).splitlines()[-1].strip()

    def start(self) -> None:
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "SETTLE_AUTH_SECRET": self.secret,
            "SETTLE_PUBLIC_URL": self.url,
            "SETTLE_JOBS_INTERVAL_S": "1",
            "NEXT_TELEMETRY_DISABLED": "1",
            "PORT": str(self.port),
        }
        self.process = subprocess.Popen(
            ["node", "bin/settle-server.mjs", "-p", str(self.port), "-H", "127.0.0.1"],
            cwd=REPO,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if self.healthy():
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"Settle did not become healthy; its output:\n{Path(self.log.name).read_text()}")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/health", timeout=2) as res:
                return bool(res.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        """Stops the server (its process group: Next.js may have children) and waits until the port is free."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)

    def drop(self) -> None:
        self.stop()
        _admin_sql(f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)")
        self.log.close()
        os.unlink(self.log.name)

    def api(self, method: str, path: str, body: Any = None, token: Optional[str] = None) -> Any:
        """One call to Settle's API with the runtime key (or a person's token); returns the parsed body."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {token or self.key}", "Content-Type": "application/json"}
        with urllib.request.urlopen(urllib.request.Request(self.url + path, data=data, headers=headers, method=method), timeout=30) as res:
            return json.loads(res.read() or b"null")


_shared: Optional[SettleServer] = None


def shared_settle() -> SettleServer:
    """The run's Settle, started on first use and dropped when the interpreter exits."""
    global _shared
    if _shared is None:
        if not (REPO / ".next" / "BUILD_ID").exists():
            if os.environ.get("SETTLE_PY_REQUIRE_SERVER") == "1":
                raise RuntimeError("no Next.js build in this checkout: run `npx next build` first")
            raise unittest.SkipTest("no Next.js build (npx next build): the tests against a real Settle are skipped")
        server = SettleServer()
        server.create()
        atexit.register(server.drop)
        server.start()
        _shared = server
    if _shared.process is None:
        _shared.start()
    return _shared
