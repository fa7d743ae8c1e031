"""An `async def` tool behind Settle: the same decorator, awaited in your event loop.

    SETTLE_URL=http://localhost:3000 SETTLE_KEY=stl_rk_... python3 examples/async_tool.py

Past `timeout_s` the coroutine is cancelled and the outcome recorded as unknown (it may still have
landed); a task cancelled mid-call is reported the same way before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
from typing import Dict, List

from settle_client import Settle, SettleError, current_call, intent_key

settle = Settle()
sent: Dict[str, str] = {}


@settle.tool(
    effect_class="send",
    idempotency_key=lambda to, text, notice: intent_key("ticket-42", "agent-7", "send_sms", to, notice),
    task_id="ticket-42",
    timeout_s=10,
)
async def send_sms(to: str, text: str, notice: str) -> str:
    await asyncio.sleep(0.05)  # the SMS gateway
    return sent.setdefault(current_call().idempotency_key, f"sms to {to}: {text}")


async def main() -> List[str]:
    # Two different notices side by side: two intents, two keys, two messages.
    results = await asyncio.gather(
        send_sms("+15550100", "Your refund is on its way.", "notice-1"),
        send_sms("+15550100", "Your refund has arrived.", "notice-2"),
        return_exceptions=True,
    )
    return [r if isinstance(r, str) else f"{type(r).__name__}: {r}" for r in results if isinstance(r, (str, SettleError))]


if __name__ == "__main__":
    for line in asyncio.run(main()):
        print(line)
