"""Checks of answers the fuzz benches share: what `/api/tokenize` may answer.

A source that loads is asked to tokenize; `tokenize_and_check` sends the request, counts
its status per mutation and records anything but an accepted answer as a failure.
"""

from __future__ import annotations

import json
from typing import Any

from bench._fuzz import FuzzResult, Request, Send, send_or_fail


def json_object(body: bytes) -> dict[str, Any] | None:
    """The body as a JSON object, or None when it is not one."""
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def check_tokenize_answer(status: int, body: bytes, text: str) -> str | None:
    """Why an answer of `/api/tokenize` for `text` is wrong, or None if it is fine.

    200 carries tokens whose spans lie inside the text; 422 is `TokenizerUnavailable`, or
    a `LimitExceeded` naming its limit (the source had to be read back from the database
    first, by a worker that ran out of a limit doing it).
    """
    if status not in (200, 422):
        return f"tokenizing answered {status}: {body[:200]!r}"
    answer = json_object(body)
    if answer is None:
        return f"tokenizing answered {status} with a body that is not a JSON object"
    if status == 422:
        error = answer.get("error") or {}
        limited = error.get("type") == "LimitExceeded" and type(error.get("limit")) is str
        if error.get("type") != "TokenizerUnavailable" and not limited:
            return f"tokenizing answered a 422 that is neither unavailable nor a limit: {error}"
        return None
    tokens, count = answer.get("tokens"), answer.get("count")
    if type(tokens) is not list or type(count) is not int or count < len(tokens):
        return f"tokenizing answered 200 without tokens and a count: {body[:200]!r}"
    for token in tokens:
        if not 0 <= token["start"] <= token["end"] <= len(text):
            return f"token {token} spans outside the {len(text)}-character text"
    return None


def tokenize_and_check(
    send: Send,
    result: FuzzResult,
    label: str,
    case: str,
    request: dict[str, Any],
    fresh: bool = False,
) -> dict[str, Any] | None:
    """POST `request` to /api/tokenize, count the status, and check the answer."""
    body = json.dumps(request).encode()
    sent = Request("POST", "/api/tokenize", body, fresh=fresh)
    status, answer = send_or_fail(send, result, case, sent)
    result.record_tokenize(label, status)
    if status == 0:
        return None
    why = check_tokenize_answer(status, answer, request["text"])
    if why is not None:
        result.fail(case, why)
        return None
    parsed = json_object(answer)
    if status == 422 and parsed is not None:
        error = parsed["error"]
        why = error.get("limit") or "tokenizer failed or unsupported"
        result.note(f"tokenize 422 {error['type']} ({why})")
    return parsed
