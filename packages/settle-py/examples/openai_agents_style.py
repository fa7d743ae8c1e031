"""An OpenAI-style function tool: an async typed function, and the loop that answers the model's
function calls with `function_call_output` items (the Responses API's shape).

    SETTLE_URL=http://localhost:3000 SETTLE_KEY=stl_rk_... python3 examples/openai_agents_style.py

The Agents SDK's `@function_tool` reads the wrapped function's signature and docstring as usual. The
idempotency key comes from the arguments (the intent), never from `call_id`: a model that asks again
sends a new call_id for the same intent.
This file does not import the OpenAI packages; the calls below are what the model would send.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable, Dict, List

from settle_client import Settle, SettleError, intent_key, task

settle = Settle()
tickets: Dict[str, str] = {}


@settle.tool(effect_class="create", idempotency_key=lambda customer, summary: intent_key("chat-55", "agent-7", "open_ticket", customer))
async def open_ticket(customer: str, summary: str) -> Dict[str, str]:
    """Open a support ticket for a customer."""
    await asyncio.sleep(0)
    number = tickets.setdefault(customer, f"T-{len(tickets) + 1}")
    return {"ticket": number, "summary": summary}


TOOLS: Dict[str, Callable[..., Awaitable[Any]]] = {"open_ticket": open_ticket}


async def answer(call: Dict[str, str]) -> Dict[str, str]:
    """One function call from the model, answered with the tool's result or Settle's verdict."""
    try:
        output: Any = await TOOLS[call["name"]](**json.loads(call["arguments"]))
    except SettleError as error:
        output = error.envelope
    return {"type": "function_call_output", "call_id": call["call_id"], "output": json.dumps(output)}


async def main() -> List[Dict[str, str]]:
    arguments = json.dumps({"customer": "cus_8", "summary": "Parcel arrived damaged"})
    with task("chat-55"):
        return [await answer({"type": "function_call", "call_id": call_id, "name": "open_ticket", "arguments": arguments}) for call_id in ("call_1", "call_2")]


if __name__ == "__main__":
    for item in asyncio.run(main()):
        print(item["call_id"], item["output"])
    print("tickets:", tickets)
