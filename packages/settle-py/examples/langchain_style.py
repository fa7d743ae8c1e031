"""A LangChain-style tool: a typed function whose docstring describes it to the model.

    SETTLE_URL=http://localhost:3000 SETTLE_KEY=stl_rk_... python3 examples/langchain_style.py

The wrapped function keeps its name, docstring and signature, so LangChain's `@tool` (or
`StructuredTool.from_function`) builds the same schema from it. Hand the model Settle's verdict
instead of a bare "failed": `error.envelope` says whether the effect happened and what to do next.
This file does not import LangChain; with it installed, pass `refund_tool` to `langchain_core.tools.tool`.
"""

from __future__ import annotations

import json
from typing import Dict

from settle_client import Settle, SettleError, current_task, intent_key, task

settle = Settle()
refunds: Dict[str, int] = {}


def refund_key(order_id: str, amount_cents: int) -> str:
    return intent_key(current_task() or "", "support-agent", "refund", order_id)


@settle.tool(effect_class="money", idempotency_key=refund_key)
def refund(order_id: str, amount_cents: int) -> str:
    """Refund part or all of an order to the customer's card."""
    refunds[order_id] = refunds.get(order_id, 0) + amount_cents
    return f"refunded {amount_cents} cents on {order_id}"


def refund_tool(order_id: str, amount_cents: int) -> str:
    """Refund part or all of an order to the customer's card."""
    try:
        return refund(order_id, amount_cents)
    except SettleError as error:
        # The model reads the closed vocabulary (commit_state, next_action), never a guess.
        return json.dumps(error.envelope)


if __name__ == "__main__":
    with task("conversation-981"):
        print(refund_tool("ord-17", 1500))
        # The model calls the tool again with the same intent: Settle refuses, no second refund.
        print(json.loads(refund_tool("ord-17", 1500))["code"])
    print("refunded in all:", refunds)
