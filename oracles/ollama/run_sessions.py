"""The runner of Ollama's parser tests written as statements (record_steps.py): a
session's Adds read (at once, or chunk by chunk for the parsers that stream here) and
its checks compared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oracles.ollama.case import Case, NotBuilt
from oracles.ollama.govalues import unsupported
from oracles.ollama.run_streams import streamed
from oracles.ollama.runners import call_json


def _session_parser(spec: dict[str, Any]) -> Callable[..., Any]:
    """The engine's parser for a test's `parser := ...` (NotBuilt when it is not there)."""
    from app.render.engines.ollama.parsers import PARSERS, qwen3

    if spec.get("type") == "Qwen3Parser":
        fields = spec["fields"]
        return qwen3.make(fields["hasThinkingSupport"], fields["defaultThinking"])
    name = spec.get("name") or {"GLM47Parser": "glm-4.7"}.get(spec.get("type", ""), "")
    if name not in PARSERS:
        raise NotBuilt(f"the parser {name or spec.get('type')!r} is not reproduced yet")
    return PARSERS[name]


def _after_last(spec: dict[str, Any]) -> Callable[..., Any]:
    """The parse that takes the conversation's last message (which the PARSERS interface
    does not carry), for the parsers whose start depends on it."""
    from app.render.engines.ollama.parsers import qwen35

    if spec.get("name") == "qwen3.5":
        return qwen35.parse_after
    raise NotBuilt(f"the parser {spec} is not run with a last message here")


def _joined(steps: list[dict[str, Any]], field: str) -> Any:
    """A check joined over the steps (None when a step does not make it)."""
    values = [step["checks"].get(field) for step in steps]
    kind = int if field == "calls" else str
    if not all(isinstance(value, kind) for value in values):
        return None  # a step without this check, or one against another variable
    return sum(values) if field == "calls" else "".join(values)


def session(case: Case) -> tuple[Any, Any]:
    """A statement-style parser test: its Adds' texts read at once, its checks joined."""
    f = case.fields
    tools, last, think = f["init"]
    missing = unsupported([tools, last])
    if missing:
        raise NotBuilt(f"its Init arguments name Go values built in code: {', '.join(missing)}")
    text = "".join(s["text"] for s in f["steps"])
    message = streamed(f)
    if message is not None:
        pass  # fed chunk by chunk, as the test feeds Ollama's parser
    elif last is not None:
        message = _after_last(f["parser"])(text, tools, think, last)
    else:
        message = _session_parser(f["parser"])(text, tools, think)
    calls = [call_json(name, arguments) for name, arguments in message.tool_calls]
    got, want = {}, {}
    for field in ("content", "thinking", "calls"):
        joined = _joined(f["steps"], field)
        if isinstance(joined, (str, int)):
            want[field] = joined
            got[field] = len(calls) if field == "calls" else getattr(message, field)
    before = 0
    for step in f["steps"]:
        if "first_name" in step["checks"]:
            want[f"name {before}"] = step["checks"]["first_name"]
            got[f"name {before}"] = message.tool_calls[before][0] if len(calls) > before else None
        before += (
            step["checks"].get("calls", 0) if isinstance(step["checks"].get("calls"), int) else 0
        )
    _indexed(message, f["steps"][-1]["checks"], got, want)
    if "want" in f:
        wanted = f["want"] if isinstance(f["want"], list) else [f["want"]]
        want["tool calls"] = [
            call_json(w["function"]["name"], w["function"]["arguments"]) for w in wanted
        ]
        got["tool calls"] = calls[: len(wanted)]
    if "want_args" in f:
        want["first arguments"] = call_json("", f["want_args"])
        got["first arguments"] = call_json("", message.tool_calls[0][1]) if calls else None
    return got, want


def _indexed(message: Any, checks: dict[str, Any], got: dict, want: dict) -> None:
    """The last step's checks of call N's name (`name N`) and argument (`arg N key`)."""
    for check, value in checks.items():
        parts = check.split(" ", 2)
        if parts[0] not in ("name", "arg") or len(parts) < 2:
            continue
        index = int(parts[1])
        call = message.tool_calls[index] if index < len(message.tool_calls) else None
        want[check] = value
        if call is None:
            got[check] = None
        else:
            got[check] = call[0] if parts[0] == "name" else call[1].get(parts[2])
