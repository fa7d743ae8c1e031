"""A plain function tool behind Settle.

    SETTLE_URL=http://localhost:3000 SETTLE_KEY=stl_rk_... python3 examples/plain_tool.py

The decorated function is called as before. It returns once the effect is committed; otherwise it
raises a SettleError subclass that says whether the effect happened and what to do next.
"""

from __future__ import annotations

from typing import Dict

from settle_client import OutcomeUnknown, ProbeFinding, Settle, SettleError, current_call, intent_key

settle = Settle()  # SETTLE_URL, SETTLE_KEY
orders: Dict[str, Dict[str, str]] = {}  # the shop, by idempotency key


def find_order(key: str) -> ProbeFinding[Dict[str, str]]:
    """The probe: does an order with this key exist? Settle asks for it before any second call."""
    found = orders.get(key)
    return ProbeFinding(found is not None, found)


@settle.tool(
    effect_class="create",
    # From the intent (who, on what, to do what, in which task), never from the payload.
    idempotency_key=lambda cart_id, sku: intent_key("ord-7741", "agent-7", "create_order", cart_id),
    task_id="ord-7741",
    probe=find_order,
    timeout_s=30,
)
def create_order(cart_id: str, sku: str) -> Dict[str, str]:
    key = current_call().idempotency_key  # send it to the shop as its Idempotency-Key
    return orders.setdefault(key, {"id": f"order-{len(orders) + 1}", "sku": sku})


if __name__ == "__main__":
    for _ in range(2):  # the second time is the agent repeating a step: the guard refuses it
        try:
            print("created", create_order("cart-1", "sku-1"))
        except OutcomeUnknown as error:
            print("unknown, do not retry:", error.next_action)
        except SettleError as error:
            print(type(error).__name__, error.commit_state, error.next_action)
    print("orders in the shop:", len(orders))
