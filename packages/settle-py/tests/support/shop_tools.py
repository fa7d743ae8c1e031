"""The fixtures' tools: HTTP calls to the fake shop, and the one place where its answer becomes an
outcome (examples/agent-runtime/classify-shop.ts, ported). The body decides, never the status line
alone: a 200 whose body is an error is an error."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict

from settle_client import CallResult, ClassifyContext, ProbeFinding, classify_result, current_call

ShopResponse = Dict[str, Any]


def shop_post(url: str, path: str, body: Any) -> ShopResponse:
    """One request with the call's idempotency key and what is left of its budget as the timeout."""
    call = current_call()
    request = urllib.request.Request(
        f"{url}/{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Idempotency-Key": call.idempotency_key},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=call.remaining_s() or 10) as res:
            return {"status": res.status, "headers": {k.lower(): v for k, v in res.headers.items()}, "body": json.loads(res.read())}
    except urllib.error.HTTPError as error:
        # The shop answered: its status and body are the evidence, read by classify_shop.
        with error:
            return {"status": error.code, "headers": {k.lower(): v for k, v in error.headers.items()}, "body": json.loads(error.read() or b"null")}


def shop_probe(url: str, key: str) -> ProbeFinding[ShopResponse]:
    """Looks the effect up by idempotency key; raising (the shop is down) means the probe failed."""
    try:
        with urllib.request.urlopen(f"{url}/lookup?key={urllib.parse.quote(key)}", timeout=10) as res:
            return ProbeFinding(True, {"status": 200, "headers": {}, "body": json.loads(res.read())})
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return ProbeFinding(False)
        raise


def classify_shop(result: CallResult[ShopResponse], context: ClassifyContext) -> Dict[str, Any]:
    if result.kind != "returned" or result.value is None:
        return classify_result(result, context)
    status, headers, body = result.value["status"], result.value["headers"], result.value["body"]
    fields = body if isinstance(body, dict) else {}
    attempt_id = context.attempt_id
    if status in (429, 503):
        # Refused before anything was written; honour the server's Retry-After.
        retry_after = headers.get("retry-after", "")
        return {"outcome": "retryable", "effect_applied": "no", "attempt_id": attempt_id, "retry_after_s": int(retry_after) if retry_after.isdigit() else None, "message": f"HTTP {status}"}
    # An error body in source article 001 (docs/outcome-model.md)'s five fields, whatever the status: Settle reads it as such.
    if isinstance(fields.get("code"), str):
        return fields
    if isinstance(fields.get("items"), list):
        items = [{"id": i["id"], "applied": i["applied"], **({"reason": i["reason"]} if i.get("reason") else {})} for i in fields["items"]]
        done = sum(1 for i in items if i["applied"] == "yes")
        if done == len(items):
            return {"outcome": "ok", "effect_applied": "yes", "attempt_id": attempt_id, "items": items}
        return {"outcome": "permanent", "effect_applied": "no" if done == 0 else "partial", "attempt_id": attempt_id, "items": items, "message": f"{done} of {len(items)} rows written"}
    if 200 <= status < 300:
        return {"outcome": "ok", "effect_applied": "yes", "attempt_id": attempt_id}
    # A 5xx says nothing about whether a write landed.
    if status >= 500:
        return classify_result(CallResult("threw", error=RuntimeError(f"HTTP {status}")), context)
    return {"outcome": "permanent", "effect_applied": "no", "attempt_id": attempt_id, "message": f"HTTP {status}"}
