"""A verifier against the fake shop and a real Settle: source article 002 (docs/outcome-model.md)'s kill-mid-call, with nobody left to probe.
The agent process died mid-call (half the orders landed, half never reached the shop); all its log holds is an
intent and an unknown outcome. A worker of this client looks each order up at the shop by its key when Settle
asks, and Settle settles every one without a person; the share settled so is printed."""

from __future__ import annotations

import secrets
import threading
import time
import unittest
from typing import Any, Dict, List

import support  # noqa: F401
from settle_client import Settle, intent_key
from support.clients import make_client
from support.fake_shop import FakeShop
from support.settle_server import _node, shared_settle

TOOL = "place_order_verified"
CASES = 10


class VerifierAgainstTheShop(unittest.TestCase):
    def setUp(self) -> None:
        self.settle = shared_settle()
        env = {"DATABASE_URL": self.settle.database_url}
        email = f"admin-{secrets.token_hex(3)}@example.com"
        _node(["bin/settle.mjs", "users", "create", "--email", email, "--role", "admin", "--password", secrets.token_hex(12)], env)
        admin = _node(["bin/settle.mjs", "tokens", "create", "--email", email], env).splitlines()[-1].strip()
        verify = {"after_s": 1, "every_s": 5, "max_tries": 3, "absent_after_s": 1, "lease_s": 30}
        self.settle.api("POST", "/api/v1/admin/tool-catalog", {"runtime": "py-runtime", "pattern": TOOL, "effect_class": "create", "verify": verify}, token=admin)
        self.shop = FakeShop()
        self.addCleanup(self.shop.close)
        self.client: Settle = make_client(self, self.settle.url, self.settle.key)

    def report_killed_mid_call(self) -> List[Dict[str, str]]:
        tag = secrets.token_hex(4)
        cases = []
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for i in range(CASES):
            task = f"py-verify-{tag}-{i}"
            key = intent_key(task, "agent-7", TOOL, "cart-1")
            invocation = f"{task}:{key}"
            if i % 2 == 0:
                self.shop._apply(key, {"id": f"ord_{key[:8]}", "sku": "sku-1"})
            base: Dict[str, Any] = {"task_id": task, "invocation_id": invocation, "tool": TOOL, "effect_class": "create", "idempotency_key": key, "attempt": 1, "at": now}
            self.client.report([
                {**base, "event_id": f"{invocation}:a1:intent", "phase": "intent"},
                {**base, "event_id": f"{invocation}:a1:outcome", "phase": "outcome", "envelope": {"outcome": "unknown", "effect_applied": "unknown"}},
            ])
            cases.append({"key": key, "invocation_id": invocation})
        self.assertTrue(self.client.flush(10))
        return cases

    def test_a_verifier_at_the_shop_settles_every_killed_mid_call_case_without_a_person(self) -> None:
        cases = self.report_killed_mid_call()

        @self.client.verifier(TOOL)
        def order_exists(item: Dict[str, Any]) -> Dict[str, Any]:
            order = self.shop.find_by_key(item["idempotency_key"])
            return {"found": False, "evidence": "no order with this key"} if order is None else {"found": True, "evidence": f"order {order['id']}", "ref": order["id"]}

        stop = threading.Event()
        worker = threading.Thread(target=self.client.serve_verifications, args=(stop,), kwargs={"wait_s": 2, "worker": "py-example"}, daemon=True)
        worker.start()
        deadline = time.monotonic() + 30
        decisions: List[Dict[str, Any]] = []
        while time.monotonic() < deadline:
            decisions = [dict(self.client.get_decision(c["invocation_id"])) for c in cases]
            if all(d["status"] == "reconciled" for d in decisions):
                break
            time.sleep(0.25)
        stop.set()
        worker.join(5)
        settled = sum(1 for d in decisions if d["status"] == "reconciled")
        found = sum(1 for d in decisions if d["decision"] == "do_not_retry")
        print(f"\nSettle settled {settled} of {CASES} killed-mid-call cases without a person ({settled * 100 // CASES} %): {found} found, {settled - found} not found")
        self.assertEqual(settled, CASES)
        self.assertEqual([d["decision"] for d in decisions], ["do_not_retry", "retry_allowed"] * (CASES // 2))
        self.assertEqual(sum(self.shop.effects(c["key"]) for c in cases), CASES // 2)


if __name__ == "__main__":
    unittest.main()
