"""One error protocol: every error of ours carries its status and its JSON body, and one
handler in app/web/errors.py answers them all."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from app.budget import OverLimit
from app.errors import ApiError, NotFound, PlainError, RequestError
from app.problems import TemplateProblem
from app.shares.state import ShareTooLarge
from app.sources.gguf import IncompleteHeader
from app.sources.store import SourceRefused, TokenizerUnavailable
from app.sources.worker import Refused

APP = Path(__file__).resolve().parents[1] / "app"

#: One of each, with the status and body docs/api.md documents.
EXAMPLES = [
    (TemplateProblem("UndefinedError", "x is undefined", 3), 422),
    (RequestError("messages", "'messages' must be a list."), 400),
    (NotFound("No share with id 'x'."), 404),
    (OverLimit("json_depth", "too deep", 400, fields={"field": "messages"}), 400),
    (OverLimit("queue", "busy", 503, "Busy", headers={"Retry-After": "1"}), 503),
    (IncompleteHeader(4096, "need at least 4096"), 409),
    (SourceRefused(Refused("GGUFError", "bad magic", offset=0)), 422),
    (SourceRefused(Refused("HFFileError", "x.json: not JSON", file="x.json")), 422),
    (TokenizerUnavailable("no vocabulary", "source_cpu_seconds"), 422),
    (ShareTooLarge(size_bytes=300_000, max_bytes=256_000), 413),
    (PlainError("MethodNotAllowed", "not here", 405), 405),
]


@pytest.mark.parametrize(("error", "status"), EXAMPLES, ids=lambda e: type(e).__name__)
def test_each_error_carries_its_status_and_body(error: ApiError, status: int) -> None:
    assert error.status == status
    body = error.answer()
    assert set(body) == {"error"}
    assert {"type", "message"} <= set(body["error"])


#: The errors that sandbox and source workers send back pickled.
FROM_WORKERS = [
    (error, status)
    for error, status in EXAMPLES
    if isinstance(error, TemplateProblem | OverLimit | IncompleteHeader | RequestError)
]


@pytest.mark.parametrize(("error", "status"), FROM_WORKERS, ids=lambda e: type(e).__name__)
def test_errors_from_workers_arrive_whole(error: ApiError, status: int) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.to_json(), again.status) == (type(error), error.to_json(), status)


def test_the_documented_bodies() -> None:
    assert ShareTooLarge(300, 200).to_json() == {
        "type": "PayloadTooLarge",
        "message": "The shared state is 300 bytes; the limit is 200.",
        "max_bytes": 200,
        "size_bytes": 300,
    }
    assert IncompleteHeader(10, "m").to_json() == {
        "type": "IncompleteHeader",
        "message": "m",
        "need_bytes": 10,
    }
    gguf = SourceRefused(Refused("GGUFError", "m", offset=4, limit="gguf_array_items"))
    assert gguf.to_json() == {
        "type": "GGUFError",
        "message": "m",
        "offset": 4,
        "limit": "gguf_array_items",
    }


def _hand_built_errors(path: Path) -> list[str]:
    """`return {"error": ...}, status` or a call to a body-building helper in `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            first = node.value.elts[0] if node.value.elts else None
            keys = first.keys if isinstance(first, ast.Dict) else []
            if any(isinstance(k, ast.Constant) and k.value == "error" for k in keys):
                found.append(f"{path.name}:{node.lineno}")
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "error_body":
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_views_build_no_error_bodies_by_hand() -> None:
    views = [*sorted((APP / "web").glob("*.py")), *sorted((APP / "display").glob("*.py"))]
    views = [path for path in views if path.name != "errors.py"]
    assert [spot for path in views for spot in _hand_built_errors(path)] == []


def test_an_error_raised_in_a_view_is_answered_with_its_status_and_body(client) -> None:
    answer = client.get("/api/library/nope")
    assert answer.status_code == 404
    assert answer.json == NotFound("No library template named 'nope'.").answer()
